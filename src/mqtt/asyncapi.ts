/**
 * The AsyncAPI 3.0 document of the station MQTT contract (docs/api.md, "The AsyncAPI document"),
 * built from what the code itself uses: the payload schemas the stations and the service check
 * messages with (src/contract/payloads.ts, src/contract/topics.ts), the fixture's topic templates as StationTopics fills them, and the
 * QoS and retained flags the station client publishes with. Nothing here is written twice, so the
 * document cannot drift from the behaviour: a change to a schema or a template changes it.
 *
 * Served as `GET /sim/v1/asyncapi.json` and printed by `station-sim contract asyncapi`.
 */
import type { Fixture } from '../fixture/fixture-schema.js';
import type { Topics } from '../contract/topics.js';
import { STATION_KEEPALIVE_SECONDS } from './station-client.js';
import { CONTRACT_QOS, groupTopics, type PayloadByKind, type TopicKind } from '../contract/topics.js';
import { AckPayloadSchema, LockStatePayloadSchema, StatusPayloadSchema, UnlockCommandSchema } from '../contract/payloads.js';

/** The AsyncAPI MQTT bindings version the document follows (github.com/asyncapi/bindings, mqtt). */
export const MQTT_BINDING_VERSION = '0.2.0';

/** The version of the station contract the document describes (its `info.version`). */
export const CONTRACT_VERSION = '1.0.0';


export interface AsyncApiOptions {
  /**
   * The broker the stations connect to, as `mqtt://`, `mqtts://`, `ws://` or `wss://` URL, without
   * credentials (redact them first). It becomes the document's one server.
   * @default none: the document has no `servers`
   */
  brokerUrl?: string;
}

/** A JSON value as the document holds it. */
export type AsyncApiDocument = Record<string, unknown>;

/** Per kind: the retain flag the station client publishes with, who sends it, what it is. */
const KINDS: Record<TopicKind, { retain: boolean; action: 'send' | 'receive'; message: string; operation: string; summary: string }> = {
  status: {
    retain: true,
    action: 'send',
    message: 'status',
    operation: 'sendStatus',
    summary: 'The station status, retained.',
  },
  lockState: {
    retain: true,
    action: 'send',
    message: 'lockState',
    operation: 'sendLockState',
    summary: 'The state of one lock, retained.',
  },
  unlock: {
    retain: false,
    action: 'receive',
    message: 'unlock',
    operation: 'receiveUnlock',
    summary: 'An unlock command for one lock, from the service; never retained.',
  },
  acks: {
    retain: false,
    action: 'send',
    message: 'ack',
    operation: 'sendAck',
    summary: 'The station accepts or rejects a command, at once; not retained.',
  },
};

const ORDER: readonly TopicKind[] = ['status', 'lockState', 'unlock', 'acks'];

/** How `lastConnection` is kept (src/station/station-model.ts, src/mqtt/station-client.ts). */
export const LAST_CONNECTION_RULE =
  'Set to the time the CONNECT went out when the station connects, then refreshed to the current time by every ' +
  'heartbeat (the status is republished every `heartbeatMs`, 30 s by default, while online). The last will, fixed ' +
  'at CONNECT, carries the CONNECT time; a clean stop publishes `offline` with the latest value.';

const STATUS_DESCRIPTION =
  'Published (retained) when the station connects, on every heartbeat, when an unlock changes its battery reading ' +
  '(to the centivolt) and on a clean stop (`"status":"offline"`). ' +
  'The MQTT last will of the station session is on this topic too: the same payload with `"status":"offline"`, QoS 1, ' +
  `retained, published by the broker when the session is lost. \`lastConnection\`: ${LAST_CONNECTION_RULE}`;

const DESCRIPTIONS: Record<TopicKind, string> = {
  status: STATUS_DESCRIPTION,
  lockState: 'Published (retained) for every lock when the station connects and on every change of the lock.',
  unlock:
    'The service asks the station to unlock a lock. The station answers on its acks topic at once, then publishes ' +
    '`unlocked` after its unlock delay and `locked` after its relock time. A command id seen twice (QoS 1 redelivery) is ' +
    'acknowledged again and executed once; a command that arrives retained is ignored.',
  acks: 'The station accepts or rejects a command (`reason`: jammed, low_battery, unknown_lock, offline, expired, invalid).',
};

/** The AsyncAPI 3.0.0 document of the station contract for the stations of `fixture`. */
export function buildAsyncApi(fixture: Pick<Fixture, 'stations'>, options: AsyncApiOptions = {}): AsyncApiDocument {
  const { distinct } = groupTopics(fixture.stations);
  const channels: Record<string, unknown> = {};
  const operations: Record<string, unknown> = {};
  let willTopic: string | undefined;

  distinct.forEach((topics, index) => {
    // Channel ids: `status` … for the first (usually only) set of templates, `status-2` … for the next.
    const suffix = index === 0 ? '' : `-${index + 1}`;
    const users = fixture.stations.filter((station) => sameTemplates(station.behaviour.topics, topics.templates));
    const tokens = users.map((station) => station.token);
    const lockIds = [...new Set(users.flatMap((station) => station.locks.map((lock) => lock.lockId)))];
    for (const kind of ORDER) {
      const id = `${kind}${suffix}`;
      const address = addressOf(topics.templates, kind);
      willTopic ??= kind === 'status' ? address : undefined;
      const { message } = KINDS[kind];
      channels[id] = {
        address,
        title: `${kind}${suffix ? ` (templates ${index + 1})` : ''}`,
        description: DESCRIPTIONS[kind],
        parameters: {
          token: { description: 'The station token.', examples: tokens.slice(0, 3) },
          ...(address.includes('{lockId}') ? { lockId: { description: 'The lock id, as in the fixture.', examples: lockIds.slice(0, 3) } } : {}),
        },
        messages: { [message]: { $ref: `#/components/messages/${message}` } },
      };
      operations[`${KINDS[kind].operation}${suffix.replace('-', '')}`] = {
        action: KINDS[kind].action,
        channel: { $ref: `#/channels/${id}` },
        summary: KINDS[kind].summary,
        messages: [{ $ref: `#/channels/${id}/messages/${message}` }],
        bindings: { mqtt: { qos: CONTRACT_QOS, retain: KINDS[kind].retain, bindingVersion: MQTT_BINDING_VERSION } },
      };
    }
  });

  const examples = examplesFor(fixture.stations[0]);
  const server = options.brokerUrl === undefined ? undefined : serverOf(options.brokerUrl, willTopic);
  return {
    asyncapi: '3.0.0',
    info: {
      title: 'station-sim station MQTT contract',
      version: CONTRACT_VERSION,
      description:
        'What a virtual station publishes and receives (docs/design.md, "Default MQTT topic contract"), from the point of ' +
        'view of the station. MQTT 3.1.1, JSON payloads, QoS 1 throughout; status and lock state are retained, commands and acks are not.',
    },
    ...(server ? { servers: { broker: server } } : {}),
    defaultContentType: 'application/json',
    channels,
    operations,
    components: {
      messages: {
        status: message('status', 'StatusPayload', 'Station status', examples.status),
        lockState: message('lockState', 'LockStatePayload', 'Lock state', examples.lockState),
        unlock: message('unlock', 'UnlockCommand', 'Unlock command', examples.unlock),
        ack: message('acks', 'AckPayload', 'Command acknowledgement', examples.acks),
      },
      schemas: {
        StatusPayload: jsonSchema(StatusPayloadSchema),
        LockStatePayload: jsonSchema(LockStatePayloadSchema),
        UnlockCommand: jsonSchema(UnlockCommandSchema),
        AckPayload: jsonSchema(AckPayloadSchema),
      },
    },
  };
}

/** The topic of `kind` with the prefix put in; `{token}` and `{lockId}` stay as channel parameters. */
function addressOf(templates: Topics, kind: TopicKind): string {
  return templates[kind].replaceAll('{prefix}', templates.prefix);
}

function sameTemplates(a: Topics, b: Topics): boolean {
  return a.prefix === b.prefix && a.status === b.status && a.lockState === b.lockState && a.unlock === b.unlock && a.acks === b.acks;
}

function message(kind: TopicKind, schema: string, title: string, examples: { name: string; payload: PayloadByKind[TopicKind] }[]): unknown {
  return {
    name: KINDS[kind].message,
    title,
    summary: KINDS[kind].summary,
    contentType: 'application/json',
    payload: { $ref: `#/components/schemas/${schema}` },
    examples,
  };
}

/**
 * Example payloads, typed by the payload types so they cannot stop fitting the schemas unnoticed
 * (test/mqtt/asyncapi.test.ts checks them against the schemas too); with the first station's id and lock.
 */
function examplesFor(station: Pick<Fixture, 'stations'>['stations'][number] | undefined): { [K in TopicKind]: { name: string; payload: PayloadByKind[K] }[] } {
  const stationId = station?.stationId ?? 1001;
  const lockId = station?.locks[0]?.lockId ?? '1';
  const at = '2026-01-01T08:00:00.000Z';
  const commandId = '3f1c2a9e-7b4d-4c1e-9a57-2d8e6b0f4c13';
  return {
    status: [
      { name: 'online', payload: { stationId, status: 'online', batteryVoltage: 12.41, lastConnection: at } },
      { name: 'lastWill', payload: { stationId, status: 'offline', batteryVoltage: 12.41, lastConnection: at } },
    ],
    lockState: [{ name: 'unlocked', payload: { lockId, status: 'unlocked', lastUpdated: at } }],
    unlock: [{ name: 'unlock', payload: { commandId, sentAt: at } }],
    acks: [
      { name: 'accepted', payload: { commandId, lockId, accepted: true } },
      { name: 'rejected', payload: { commandId, lockId, accepted: false, reason: 'jammed' } },
    ],
  };
}

/** A TypeBox schema as plain JSON Schema: the symbols TypeBox keeps on it are not JSON and go. */
function jsonSchema(schema: object): unknown {
  return JSON.parse(JSON.stringify(schema));
}

const PROTOCOLS: Record<string, string> = { 'mqtt:': 'mqtt', 'mqtts:': 'secure-mqtt', 'ws:': 'ws', 'wss:': 'wss' };

function serverOf(brokerUrl: string, willTopic: string | undefined): unknown {
  const url = new URL(brokerUrl);
  const protocol = PROTOCOLS[url.protocol] ?? url.protocol.replace(/:$/, '');
  return {
    host: url.host,
    ...(url.pathname && url.pathname !== '/' ? { pathname: url.pathname } : {}),
    protocol,
    protocolVersion: '3.1.1',
    description: 'The broker the stations connect to; each station is its own session (client id `station-sim-{token}` unless the fixture says otherwise).',
    bindings: {
      mqtt: {
        keepAlive: STATION_KEEPALIVE_SECONDS,
        ...(willTopic === undefined
          ? {}
          : {
              lastWill: {
                topic: willTopic,
                qos: CONTRACT_QOS,
                retain: true,
                message: 'The status payload with "status":"offline" and lastConnection = the time of the CONNECT.',
              },
            }),
        bindingVersion: MQTT_BINDING_VERSION,
      },
    },
  };
}
