/**
 * `station-sim dashboard --url URL`: the Ink dashboard attached to any running simulator, through
 * its control plane, its event stream and the `/v1` API only. `up --dashboard` runs the same
 * in-process. Unlocks go through the `/v1` API as a fixture account, like any client's would.
 */
import type { CommandModule } from 'yargs';
import type { CliIo } from '../../output.js';
import { DASHBOARD_OPTIONS, type DashboardFlags } from './options.js';

export function dashboardCommand(io: CliIo): CommandModule<object, DashboardFlags> {
  return {
    command: 'dashboard',
    describe: 'Watch and steer a running simulator in the terminal',
    builder: (yargs) => yargs.options(DASHBOARD_OPTIONS),
    handler: async (argv: DashboardFlags) => {
      const { runDashboardCommand } = await import('./handler.js');
      await runDashboardCommand(io, argv);
    },
  };
}
