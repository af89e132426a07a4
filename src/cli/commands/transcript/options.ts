/** The options and positionals of `transcript show` and `transcript judge`, in the order --help lists them, and the flags their handlers see. */
import { ENTRY_KINDS } from '../../../transcript/entry-kinds.js';
import { JUDGE_REPORT_OPTIONS, type FlagsOf, type OptionGroup, type PositionalGroup, type PositionalsOf } from '../../options.js';

/** The transcript each action reads. */
export const TRANSCRIPT_POSITIONALS = {
  file: { type: 'string', demandOption: true },
} as const satisfies PositionalGroup;

/** `transcript show`'s options, in the order --help lists them. */
export const SHOW_OPTIONS = {
  command: {
    type: 'string',
    describe: 'Only the chain of this command id, or of the one command whose id starts with it: request, command, acks, faults, timeout, lock states',
  },
  station: { type: 'string', array: true, describe: 'Only entries about this station (repeatable); fleet-wide actions such as a reset are kept' },
  kind: { type: 'string', array: true, describe: `Only entries of this kind (repeatable): ${ENTRY_KINDS.join(', ')}` },
} as const satisfies OptionGroup;

/** The flags `transcript show`'s handler sees. */
export type ShowFlags = FlagsOf<typeof SHOW_OPTIONS> & PositionalsOf<typeof TRANSCRIPT_POSITIONALS>;

/** `transcript judge`'s options, in the order --help lists them. */
export const JUDGE_OPTIONS = {
  fixture: {
    type: 'string',
    describe: "Judge by this fixture's judge section (a file or a shipped name such as ci) instead of the one the transcript recorded",
  },
  ...JUDGE_REPORT_OPTIONS,
} as const satisfies OptionGroup;

/** The flags `transcript judge`'s handler sees. */
export type JudgeFlags = FlagsOf<typeof JUDGE_OPTIONS> & PositionalsOf<typeof TRANSCRIPT_POSITIONALS>;
