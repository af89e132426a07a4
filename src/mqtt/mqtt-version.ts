/**
 * Which MQTT protocol the sessions speak: level 4 (MQTT 3.1.1, the default) or 5 (MQTT 5.0, against
 * an external broker only: the embedded broker, aedes, speaks 3.1.1). One place for the values, the
 * words that refuse a wrong one and the notice a fixture asking for 5 on the embedded broker gets.
 */

/** MQTT protocol levels station-sim speaks (the CONNECT's Protocol Level, 3.1.1 section 3.1.2.2, 5.0 section 3.1.2.2). */
export const MQTT_PROTOCOL_VERSIONS = [4, 5] as const;
export type MqttProtocolVersion = (typeof MQTT_PROTOCOL_VERSIONS)[number];

export function isMqttProtocolVersion(value: unknown): value is MqttProtocolVersion {
  return value === 4 || value === 5;
}

/** What an option of the protocol version takes, for the messages that refuse another value. */
export const MQTT_VERSION_WANTS = '4 (MQTT 3.1.1) or 5 (MQTT 5.0)';

/** Why `--mqtt-version 5` (or `mqttVersion: 5`) is refused without an external broker. */
export const MQTT5_NEEDS_EXTERNAL_BROKER =
  'MQTT 5 needs an external broker (--broker mqtt://host:port): the embedded broker speaks MQTT 3.1.1 only';

/** The start-up notice when the fixture asks for MQTT 5 and the embedded broker runs: 3.1.1 is used. */
export function embeddedBrokerVersionNotice(fixtureSource: string): string {
  return `the fixture (${fixtureSource}) asks for MQTT 5 (mqtt.protocolVersion), but the embedded broker speaks MQTT 3.1.1 only: running MQTT 3.1.1; give --broker for MQTT 5`;
}
