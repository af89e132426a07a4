import { readFile } from 'node:fs/promises';
import type { CommandModule } from 'yargs';
import { commandChain, formatTimeline, parseTranscript } from '../../transcript/transcript-format.js';
import { SimError } from '../../errors.js';
import type { CliIo } from '../output.js';

export function transcriptCommand(io: CliIo): CommandModule {
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
              .option('command', { type: 'string', describe: 'Only the chain of this command id: request, command, acks, lock states' }),
          handler: async (argv) => {
            const file = argv.file as string;
            let text: string;
            try {
              text = await readFile(file, 'utf8');
            } catch (error) {
              throw new SimError('BAD_REQUEST', `cannot read transcript ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
            }
            const { entries, skipped } = parseTranscript(text);
            const commandId = argv.command as string | undefined;
            const shown = commandId === undefined ? entries : commandChain(entries, commandId);
            if (commandId !== undefined && shown.length === 0) throw new SimError('BAD_REQUEST', `no command ${commandId} in ${file}`);
            for (const line of formatTimeline(shown)) io.stdout.write(`${line}\n`);
            if (skipped > 0) io.stderr.write(`station-sim: ${skipped} line(s) of ${file} are not transcript entries and were skipped\n`);
          },
        })
        .demandCommand(1, 'name an action: show'),
    handler: () => undefined,
  };
}
