/** `broker`'s options, in the order --help lists them, and the flags its handler sees. */
import { BROKER_SECURITY_OPTIONS, FIXTURE_OPTIONS, HOST_OPTIONS, JSON_OPTIONS, MQTT_PORT_OPTIONS, type FlagsOf, type OptionGroup } from '../../options.js';

/** `broker`'s options, in the order --help lists them. */
export const BROKER_COMMAND_OPTIONS = { ...JSON_OPTIONS, ...HOST_OPTIONS, ...MQTT_PORT_OPTIONS, ...FIXTURE_OPTIONS, ...BROKER_SECURITY_OPTIONS } as const satisfies OptionGroup;

/** The flags `broker`'s handler sees. */
export type BrokerFlags = FlagsOf<typeof BROKER_COMMAND_OPTIONS>;
