/** `run`'s options and positional, in the order --help lists them, and the flags its handler sees. */
import {
  FIXTURE_OPTIONS,
  JUDGE_MODE_OPTIONS,
  JUDGE_REPORT_OPTIONS,
  SEED_OPTIONS,
  TIME_OPTIONS,
  httpOptionGroup,
  type FlagsOf,
  type OptionGroup,
  type PositionalGroup,
  type PositionalsOf,
} from '../../options.js';

/** `run`'s options, in the order --help lists them; `--http-port` is a free port unless given. */
export const RUN_OPTIONS = {
  ...FIXTURE_OPTIONS,
  ...SEED_OPTIONS,
  ...httpOptionGroup('free-port'),
  ...TIME_OPTIONS,
  ...JUDGE_MODE_OPTIONS,
  ...JUDGE_REPORT_OPTIONS,
  'ready-file': {
    type: 'string',
    describe: 'Write the addresses as JSON to this file once ready (removed at start and at stop)',
  },
} as const satisfies OptionGroup;

/** The command `run` wraps, as words before `--`; those after it come in `--`. */
export const RUN_POSITIONALS = {
  command: { type: 'string', array: true, describe: 'The command and its arguments, after --' },
} as const satisfies PositionalGroup;

/**
 * The words after `--`, as typed: run-cli.ts parses with 'populate--', so yargs keeps them apart
 * from the positionals and from its own options. Absent when the command line has no `--`.
 */
interface AfterDoubleDash {
  readonly '--'?: string[];
}

/** The flags `run`'s handler sees. */
export type RunFlags = FlagsOf<typeof RUN_OPTIONS> & PositionalsOf<typeof RUN_POSITIONALS> & AfterDoubleDash;
