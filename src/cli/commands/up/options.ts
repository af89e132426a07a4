/** `up`'s options, in the order --help lists them, and the flags its handler sees. */
import {
  BROKER_OPTIONS,
  BROKER_SECURITY_OPTIONS,
  BROKER_THREAD_OPTIONS,
  FIXTURE_OPTIONS,
  HEARTBEAT_OPTIONS,
  HOST_OPTIONS,
  HTTP_OPTIONS,
  JSON_OPTIONS,
  JUDGE_REPORT_OPTIONS,
  MQTT_PORT_OPTIONS,
  SEED_OPTIONS,
  TIME_OPTIONS,
  type FlagsOf,
  type OptionGroup,
} from '../../options.js';

/** `up`'s options, in the order --help lists them. */
export const UP_OPTIONS = {
  ...FIXTURE_OPTIONS,
  ...SEED_OPTIONS,
  ...JSON_OPTIONS,
  ...HOST_OPTIONS,
  ...MQTT_PORT_OPTIONS,
  ...BROKER_THREAD_OPTIONS,
  ...BROKER_OPTIONS,
  ...HTTP_OPTIONS,
  ...TIME_OPTIONS,
  ...BROKER_SECURITY_OPTIONS,
  ...JUDGE_REPORT_OPTIONS,
  ...HEARTBEAT_OPTIONS,
  dashboard: {
    type: 'string',
    describe: 'Show the live dashboard (--dashboard); "auto" shows it only in an interactive terminal',
    coerce: (value: string): string => (value === '' || value === 'true' ? 'on' : value),
    choices: ['on', 'auto', 'off'],
  },
} as const satisfies OptionGroup;

/** The flags `up`'s handler sees. */
export type UpFlags = FlagsOf<typeof UP_OPTIONS>;
