/** `dashboard`'s options, in the order --help lists them, and the flags its handler sees. */
import type { FlagsOf, OptionGroup } from '../../options.js';

export const DASHBOARD_OPTIONS = {
  url: { type: 'string', default: 'http://127.0.0.1:8080', describe: 'Base URL of the simulator (its /v1 API and /sim/v1)' },
  email: { type: 'string', describe: 'Fixture account the u key unlocks as (password from STATION_SIM_PASSWORD)' },
  'control-token': { type: 'string', describe: 'Control plane token (or STATION_SIM_CONTROL_TOKEN)' },
} as const satisfies OptionGroup;

/** The flags `dashboard`'s handler sees. */
export type DashboardFlags = FlagsOf<typeof DASHBOARD_OPTIONS>;
