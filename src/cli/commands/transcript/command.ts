import type { CommandModule } from 'yargs';
import { ENTRY_KINDS } from '../../../transcript/entry-kinds.js';
import type { CliIo, CommandResult } from '../../output.js';
import { withJudgeReport } from '../../options.js';

const JUDGE_EPILOG = `Judges a run recorded with --record again (docs/judge.md): the commands the stations received
by the service rules, and the /v1 requests by the client rules, with the judge settings the
transcript recorded, or those of --fixture.

Exit codes:
  0   every command judged, no rule broken
  1   a rule was broken, or some commands could not be judged (their entries lack what the
      station saw: a transcript from before station-sim recorded it, or commands to stations
      whose fleet ran in another process), or the file could not be read
  2   usage error`;

export function transcriptCommand(io: CliIo, result: CommandResult = { code: 0 }): CommandModule {
  return {
    command: 'transcript <action>',
    describe: 'Read a transcript written with --record',
    builder: (yargs) =>
      yargs
        .command({
          command: 'show <file>',
          describe: 'Print a transcript as a timeline, or one unlock chain with --command',
          builder: (y) =>
            y
              .positional('file', { type: 'string', demandOption: true })
              .option('command', {
                type: 'string',
                describe: 'Only the chain of this command id, or of the one command whose id starts with it: request, command, acks, faults, timeout, lock states',
              })
              .option('station', { type: 'string', array: true, describe: 'Only entries about this station (repeatable); fleet-wide actions such as a reset are kept' })
              .option('kind', { type: 'string', array: true, describe: `Only entries of this kind (repeatable): ${ENTRY_KINDS.join(', ')}` }),
          handler: async (argv) => {
            const { entryFilter, showTranscript } = await import('./handler.js');
            await showTranscript(io, argv.file, {
              command: argv.command,
              filter: entryFilter(argv.station, argv.kind),
            });
          },
        })
        .command({
          command: 'judge <file>',
          describe: 'Judge a recorded run again, offline: the findings and a summary; exit 1 when a rule was broken',
          builder: (y) =>
            withJudgeReport(
              y.positional('file', { type: 'string', demandOption: true }).option('fixture', {
                type: 'string',
                describe: "Judge by this fixture's judge section (a file or a shipped name such as ci) instead of the one the transcript recorded",
              }),
            ).epilog(JUDGE_EPILOG),
          handler: async (argv) => {
            const { judgeTranscriptFile } = await import('./handler.js');
            result.code = await judgeTranscriptFile(io, argv.file, argv.fixture, argv);
          },
        })
        .demandCommand(1, 'name an action: show, judge'),
    handler: () => undefined,
  };
}
