/**
 * The judge's line at stop (docs/judge.md): `station-sim: judge: no findings`, or the count per rule
 * of what the commands this process's stations received broke. On stderr, after everything has
 * stopped, so it is the last thing `up`, `run` and `stations` say.
 */
import type { StartedFleet } from '../fleet/start-fleet.js';
import { judgeLine } from '../judge/judge-log.js';
import { notice, type CliIo } from './output.js';

export function noticeJudge(io: CliIo, fleet: StartedFleet): void {
  notice(io, judgeLine(fleet.judge.summary()));
}
