/**
 * What each broker of the matrix does where brokers differ, as measured by broker-probes.ts against
 * the broker the matrix starts (helpers/brokers.ts: default settings but for the listeners, and
 * NATS's `mqtt.ack_wait` of 2 s). The matrix asserts every field against the running broker, and
 * docs/brokers.md carries the same table (`brokerTable`, checked by test/brokers/brokers-doc.test.ts),
 * so the table cannot drift from what the brokers do.
 */
import type { BrokerName } from '../helpers/brokers.js';

export interface BrokerTraits {
  /** The program and version measured. */
  server: string;
  /** Retained messages: delivered to a new subscription whose filter holds a wildcard (`+`). */
  retainedOnWildcard: boolean;
  /** Retained messages still there after the broker is killed and started again on its files. */
  retainedAfterRestart: boolean | typeof BY_HAND;
  /** The QoS a subscription asking for QoS 2 is granted. */
  qos2Granted: number;
  /** What a QoS 2 PUBLISH from a client gets. */
  qos2Publish: 'completed' | 'disconnected';
  /** An unacknowledged QoS 1 message of a persistent session comes again, with DUP set. */
  redelivery: { redelivered: boolean; dup: boolean };
  /** The last will is published when a client's process is killed (checked by the matrix with the fleet). */
  will: true;
  /** Client ids taken: empty with a clean session, empty with a persistent one, 200+ characters, with `/`, `+` and `#`. */
  clientIds: { empty: boolean; emptyPersistent: boolean; long: boolean; slashes: boolean };
  /** The largest QoS 1 payload of those probed (64 KiB - 1 KiB up to 8 MiB) acknowledged and delivered. */
  maxPayloadBytes: number;
  /** What a CONNECT of MQTT 5 gets. */
  mqtt5: string;
  /** A queued QoS 1 command reaches a persistent session when it comes back (checked by the matrix with the fleet). */
  queuesForPersistentSession: true;
  /** TLS on the MQTT listener (checked by the matrix with the fleet and the API). */
  tls: true;
}

/**
 * RabbitMQ's node takes 10-30 s to boot on the CI machine: the suite does not restart it. Measured
 * by hand once (a retained message published, the node SIGKILLed and started on its data folder,
 * the message read again by its exact topic), it kept the message.
 */
export const BY_HAND = 'yes (by hand; the suite does not restart it)';

/** The payload sizes `probeMaxPayload` tries, in order. */
export const PAYLOAD_SIZES = [63 * 1024, 1024 * 1024 - 1024, 1024 * 1024 + 1024, 8 * 1024 * 1024];

const SAME_CLIENT_IDS = { empty: true, emptyPersistent: false, long: true, slashes: true };

export const BROKER_TRAITS: Record<BrokerName, BrokerTraits> = {
  embedded: {
    server: 'station-sim embedded broker (aedes)',
    retainedOnWildcard: true,
    retainedAfterRestart: false,
    qos2Granted: 2,
    qos2Publish: 'completed',
    redelivery: { redelivered: true, dup: false },
    will: true,
    clientIds: SAME_CLIENT_IDS,
    maxPayloadBytes: 63 * 1024,
    mqtt5: 'CONNACK 1',
    queuesForPersistentSession: true,
    tls: true,
  },
  mosquitto: {
    server: 'Mosquitto 2.0',
    retainedOnWildcard: true,
    retainedAfterRestart: false,
    qos2Granted: 2,
    qos2Publish: 'completed',
    redelivery: { redelivered: true, dup: true },
    will: true,
    clientIds: SAME_CLIENT_IDS,
    maxPayloadBytes: 8 * 1024 * 1024,
    mqtt5: 'accepted',
    queuesForPersistentSession: true,
    tls: true,
  },
  nats: {
    server: 'nats-server 2.9',
    retainedOnWildcard: true,
    retainedAfterRestart: true,
    qos2Granted: 1,
    qos2Publish: 'disconnected',
    redelivery: { redelivered: true, dup: true },
    will: true,
    clientIds: SAME_CLIENT_IDS,
    maxPayloadBytes: 8 * 1024 * 1024,
    mqtt5: 'CONNACK 1',
    queuesForPersistentSession: true,
    tls: true,
  },
  rabbitmq: {
    server: 'RabbitMQ 3.10 (rabbitmq_mqtt)',
    retainedOnWildcard: false,
    retainedAfterRestart: BY_HAND,
    qos2Granted: 1,
    qos2Publish: 'completed',
    redelivery: { redelivered: true, dup: true },
    will: true,
    clientIds: SAME_CLIENT_IDS,
    maxPayloadBytes: 8 * 1024 * 1024,
    mqtt5: 'connection closed',
    queuesForPersistentSession: true,
    tls: true,
  },
};

const COLUMNS: BrokerName[] = ['embedded', 'mosquitto', 'nats', 'rabbitmq'];
const HEADERS: Record<BrokerName, string> = { embedded: 'embedded (aedes)', mosquitto: 'Mosquitto 2.0', nats: 'NATS 2.9', rabbitmq: 'RabbitMQ 3.10' };

const yes = (value: boolean): string => (value ? 'yes' : 'no');
const size = (bytes: number): string => (bytes >= 1024 * 1024 ? `≥ ${bytes / (1024 * 1024)} MiB (largest probed)` : `${bytes / 1024} KiB (64 KiB packets)`);

const ROWS: [string, (traits: BrokerTraits) => string][] = [
  ['retained on a wildcard subscription', (t) => yes(t.retainedOnWildcard)],
  ['retained after a broker restart', (t) => (typeof t.retainedAfterRestart === 'boolean' ? yes(t.retainedAfterRestart) : t.retainedAfterRestart)],
  ['QoS 2 subscription granted', (t) => `QoS ${t.qos2Granted}`],
  ['QoS 2 PUBLISH', (t) => t.qos2Publish],
  ['QoS 1 redelivered to a persistent session', (t) => `${yes(t.redelivery.redelivered)}, DUP ${t.redelivery.dup ? 'set' : 'not set'}`],
  ['last will on a killed process', (t) => yes(t.will)],
  ['queued QoS 1 for a persistent session', (t) => yes(t.queuesForPersistentSession)],
  ['client id: empty, clean session', (t) => yes(t.clientIds.empty)],
  ['client id: empty, persistent session', (t) => (t.clientIds.emptyPersistent ? 'yes' : 'refused (CONNACK 2)')],
  ['client id: 200+ characters', (t) => yes(t.clientIds.long)],
  ['client id with `/`, `+`, `#`', (t) => yes(t.clientIds.slashes)],
  ['largest QoS 1 payload', (t) => size(t.maxPayloadBytes)],
  ['MQTT 5 CONNECT', (t) => t.mqtt5],
  ['TLS listener', (t) => yes(t.tls)],
];

/** The Markdown table of docs/brokers.md, made from BROKER_TRAITS. */
export function brokerTable(): string {
  const lines = [`| | ${COLUMNS.map((name) => HEADERS[name]).join(' | ')} |`, `|---|${COLUMNS.map(() => '---').join('|')}|`];
  for (const [label, cell] of ROWS) lines.push(`| ${label} | ${COLUMNS.map((name) => cell(BROKER_TRAITS[name])).join(' | ')} |`);
  return lines.join('\n');
}
