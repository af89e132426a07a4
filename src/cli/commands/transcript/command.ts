import type { CommandModule } from 'yargs';
import type { CliIo, CommandResult } from '../../output.js';
import { JUDGE_OPTIONS, SHOW_OPTIONS, TRANSCRIPT_POSITIONALS, type JudgeFlags, type ShowFlags } from './options.js';

const JUDGE_EPILOG = `Judges a run recorded with --record again (docs/judge.md): the commands the stations received
by the service rules, and the /v1 requests by the client rules, with the judge settings the
transcript recorded, or those of --fixture.

Exit codes:
  0   every command judged, no rule broken
  1   a rule was broken, or some commands could not be judged (their entries lack what the
      station saw: a transcript from before station-sim recorded it, or commands to stations
      whose fleet ran in another process), or the file could not be read
  2   usage error`;

function showCommand(io: CliIo): CommandModule<object, ShowFlags> {
  return {
    command: 'show <file>',
    describe: 'Print a transcript as a timeline, or one unlock chain with --command',
    builder: (yargs) => yargs.positional('file', TRANSCRIPT_POSITIONALS.file).options(SHOW_OPTIONS),
    handler: async (argv: ShowFlags) => {
      const { showTranscript } = await import('./show-handler.js');
      await showTranscript(io, argv);
    },
  };
}

function judgeCommand(io: CliIo, result: CommandResult): CommandModule<object, JudgeFlags> {
  return {
    command: 'judge <file>',
    describe: 'Judge a recorded run again, offline: the findings and a summary; exit 1 when a rule was broken',
    builder: (yargs) => yargs.positional('file', TRANSCRIPT_POSITIONALS.file).options(JUDGE_OPTIONS).epilog(JUDGE_EPILOG),
    handler: async (argv: JudgeFlags) => {
      const { judgeTranscriptFile } = await import('./judge-handler.js');
      result.code = await judgeTranscriptFile(io, argv);
    },
  };
}

export function transcriptCommand(io: CliIo, result: CommandResult = { code: 0 }): CommandModule {
  return {
    command: 'transcript <action>',
    describe: 'Read a transcript written with --record',
    builder: (yargs) => yargs.command(showCommand(io)).command(judgeCommand(io, result)).demandCommand(1, 'name an action: show, judge'),
    handler: () => undefined,
  };
}
