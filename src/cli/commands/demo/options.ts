/** `demo`'s options, in the order --help lists them, and the flags its handler sees. */
import { SEED_OPTIONS, TIME_OPTIONS, type FlagsOf, type OptionGroup } from '../../options.js';

/** `demo`'s options, in the order --help lists them. */
export const DEMO_OPTIONS = {
  ...SEED_OPTIONS,
  dashboard: {
    type: 'boolean',
    describe: 'Show the story in the dashboard (default: when stdout is a terminal and CI is not set); --no-dashboard prints it as lines',
  },
  fast: { type: 'boolean', default: false, describe: 'Play without waiting in real time (the simulated time is the same)' },
  paused: { type: 'boolean', default: false, describe: 'Start paused: space plays, n shows one step at a time (dashboard)' },
  'exit-at-end': { type: 'boolean', default: false, describe: 'Close the dashboard when the story ends (without a dashboard the command always ends with the story)' },
  record: TIME_OPTIONS.record,
  'http-port': { type: 'number', default: 0, describe: 'Port of the /v1 API and /sim/v1 control plane (default: a free one)' },
  'mqtt-port': { type: 'number', default: 0, describe: 'Port of the embedded MQTT broker (default: a free one)' },
} as const satisfies OptionGroup;

/** The flags `demo`'s handler sees. */
export type DemoFlags = FlagsOf<typeof DEMO_OPTIONS>;
