/** Entry point of the `station-sim` command. */
import { hideBin } from 'yargs/helpers';
import { runCli } from './run-cli.js';
import { stopWhenOrphaned } from './run-until-signal.js';

stopWhenOrphaned(process.env);
process.exitCode = await runCli(hideBin(process.argv));
