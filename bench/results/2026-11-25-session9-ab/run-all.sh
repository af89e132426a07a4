#!/bin/bash
# Sequential: never two benches at once.
set -u
O=/tmp/bench-session9
AFTER=/work/wt-bench-tls
BEFORE=/work/wt-before
log() { echo "$(date -u +%H:%M:%S) $*" >> $O/progress.log; }
log "tls start"
(cd $AFTER && npm run bench -- --only tls --runs 1 --out $O/tls.json) > $O/tls.stdout 2> $O/tls.stderr; log "tls rc=$?"
for round in 1 2; do
  for col in before after after-auth; do
    case $col in
      before) dir=$BEFORE; extra="";;
      after) dir=$AFTER; extra="";;
      after-auth) dir=$AFTER; extra="--broker-auth";;
    esac
    log "$col-$round boot start"
    (cd $dir && npm run bench -- --only boot --sizes 100000 --runs 1 $extra --out $O/$col-$round-boot.json) > $O/$col-$round-boot.stdout 2> $O/$col-$round-boot.stderr; log "$col-$round boot rc=$?"
    log "$col-$round unlock start"
    (cd $dir && npm run bench -- --quick --only unlock --runs 2 $extra --out $O/$col-$round-unlock.json) > $O/$col-$round-unlock.stdout 2> $O/$col-$round-unlock.stderr; log "$col-$round unlock rc=$?"
  done
done
log "all done"
