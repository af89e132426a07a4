/** `stations`' options, in the order --help lists them, and the flags its handler sees. */
import {
  FIXTURE_OPTIONS,
  HEARTBEAT_OPTIONS,
  JSON_OPTIONS,
  JUDGE_REPORT_OPTIONS,
  REQUIRED_BROKER_OPTIONS,
  SEED_OPTIONS,
  type FlagsOf,
  type OptionGroup,
} from '../../options.js';

/**
 * Where a Kubernetes Indexed Job puts each pod's completion index, 0 to completions - 1
 * (kubernetes.io/docs/concepts/workloads/controllers/job/#completion-mode). Read by the CLI itself
 * because a pod's `args` expand `$(VAR)` but do no arithmetic, and shards count from 1: without it
 * every pod would need a shell (`$((JOB_COMPLETION_INDEX+1))`), which images without one lack.
 */
export const SHARD_INDEX_VARIABLE = 'JOB_COMPLETION_INDEX';

/** `stations`' options, in the order --help lists them. */
export const STATIONS_OPTIONS = {
  ...FIXTURE_OPTIONS,
  ...SEED_OPTIONS,
  ...JSON_OPTIONS,
  ...REQUIRED_BROKER_OPTIONS,
  ...JUDGE_REPORT_OPTIONS,
  ...HEARTBEAT_OPTIONS,
  shard: {
    type: 'string',
    describe: 'Run only shard k of n of the fleet (k/n, e.g. 2/4): station i goes to shard (i mod n) + 1',
  },
  'shard-from-env': {
    type: 'string',
    describe: `Run only shard k of n (n given here), k = ${SHARD_INDEX_VARIABLE} + 1: the 0-based index a Kubernetes Indexed Job of n completions gives each pod`,
    conflicts: 'shard',
  },
} as const satisfies OptionGroup;

/** The flags `stations`' handler sees. */
export type StationsFlags = FlagsOf<typeof STATIONS_OPTIONS>;
