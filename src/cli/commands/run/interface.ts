/**
 * What `run` promises besides its options: the environment variables the command it wraps gets,
 * and its exit codes. Its --help lists them (command.ts) and its handler keeps to them (handler.ts).
 */
import { SIMULATOR_ENV } from '../../../simulator/simulator-env.js';

/** The environment variables a wrapped command gets. */
export const RUN_ENV = SIMULATOR_ENV;

/**
 * `run`'s exit codes. 125 for the simulator's own failure follows `docker run` and `git bisect
 * run`: a test suite rarely exits with it, so CI can tell "no simulator" from "tests failed".
 */
export const RUN_EXIT = {
  /** `--judge strict`: the command passed (0), but the judge found a rule broken. */
  judgeFindings: 3,
  simulatorFailed: 125,
  commandNotRunnable: 127,
} as const;
