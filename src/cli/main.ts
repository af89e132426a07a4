/** Entry point of the `station-sim` command. */
import { hideBin } from 'yargs/helpers';
import { runCli } from './run-cli.js';

process.exitCode = await runCli(hideBin(process.argv));
