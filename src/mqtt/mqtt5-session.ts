/**
 * An MQTT 5.0 session behind the interface the station binding and the gateway use (`MqttSession`),
 * for an external broker when the fixture or `--mqtt-version 5` asks for it. mqtt.js speaks the
 * protocol and mqtt-packet encodes and decodes its properties: nothing here reads or writes a
 * property's bytes. The lean client (lean-client/client.ts) stays the 3.1.1 session, and the
 * default: this file is never loaded into its path.
 *
 * What MQTT 5.0 (OASIS Standard, 7 March 2019) gives a session here, by section:
 * - Clean Start (3.1.2.4) and Session Expiry Interval (3.1.2.11.2): `clean: false` sends Clean
 *   Start 0 with `sessionExpirySeconds`, so the broker keeps the subscriptions and queues QoS 1
 *   commands while the station is away, and drops the session that long after it left. (A 5.0
 *   session without the property ends with its connection, whatever Clean Start says.)
 * - Maximum Packet Size (3.1.2.11.4): `maxIncomingPacketBytes` is told to the broker, which then
 *   does not send a larger packet [MQTT-3.1.2-25]; 3.1.1 had no way to say it.
 * - CONNACK, PUBACK and SUBACK reason codes (3.2.2.2, 3.4.2.1, 3.9.3): a refused CONNACK is an error
 *   whose `code` is the reason code (0x86 bad user name or password, 0x87 not authorized, …); a
 *   PUBACK of 0x80 or more fails the publication with the code as `error.code` (0x10 "no matching
 *   subscribers" is a success); a refused filter of a SUBACK reads as QoS 128 with its `reasonCode`.
 * - PUBLISH properties (3.3.2.3): Message Expiry Interval, User Properties, Response Topic and
 *   Correlation Data go out as given and come in on the 'message' event's third argument.
 *
 * A clean session fails its unacknowledged publications when its connection closes and never
 * sends them again (mqtt.js alone would replay them after the reconnect), as the lean client does.
 *
 * Differences from the lean client, on purpose: no publish queue cap (`maxInflight`, `maxQueued`,
 * `writeHighWaterBytes` are mqtt.js's to bound; it queues while connected), and the reconnect
 * timer is mqtt.js's, on real time: `clock` is not used, and `reconnectDelay` is asked as each
 * connection closes for the next wait (so a fleet's reconnect window, reconnect-policy.ts, does not
 * bring a v5 station's reconnect forward). A station's link (`shaper`, docs/links.md) does not shape
 * an MQTT 5 session yet: its fixture's `behaviour.link` applies at 3.1.1 only; shape the network
 * with tc netem instead.
 */
import { EventEmitter } from 'node:events';
import { MqttClient, type IClientOptions, type IClientPublishOptions } from 'mqtt';
import type { LeanClientOptions, MqttSession, PublishProperties } from './lean-client/index.js';

/** A client certificate and its key, PEM (transport.ts's `ClientCertificate`). */
interface ClientCertificate {
  cert: string | Buffer;
  key: string | Buffer;
}

/** Makes the mqtt.js client on the session's transport (transport.ts's `createMqttClient`, bound to it). */
export type Mqtt5Connector = (options: IClientOptions & { clientCert?: ClientCertificate }) => MqttClient;

/** How long the broker keeps a persistent session of a station that is away, unless the fixture says (`mqtt.mqtt5.sessionExpirySeconds`). */
export const DEFAULT_SESSION_EXPIRY_SECONDS = 3600;

export interface Mqtt5SessionOptions extends LeanClientOptions {
  /**
   * Session Expiry Interval in seconds (MQTT 5.0, 3.1.2.11.2), sent with Clean Start 0 (`clean: false`).
   * @default DEFAULT_SESSION_EXPIRY_SECONDS
   */
  sessionExpirySeconds?: number;
  /** The client certificate, given or read once before the first connection. */
  clientCert?: ClientCertificate | (() => Promise<ClientCertificate>);
}

/** The MQTT 5 reason code of an error from mqtt.js, when it has one (a refused CONNACK, PUBACK or SUBACK). */
export function reasonCodeOf(error: Error & { code?: unknown }): number | undefined {
  return typeof error.code === 'number' ? error.code : undefined;
}

/** `0x87`: how MQTT 5.0 writes reason codes. */
export function hexReasonCode(code: number): string {
  return `0x${code.toString(16).toUpperCase().padStart(2, '0')}`;
}

export class Mqtt5Session extends EventEmitter implements MqttSession {
  readonly options: { reconnectPeriod: number };
  readonly #connect: Mqtt5Connector;
  readonly #settings: Mqtt5SessionOptions;
  #client: MqttClient | undefined;
  #ending = false;
  #reconnectAttempt = 0;

  constructor(connect: Mqtt5Connector, options: Mqtt5SessionOptions) {
    super();
    this.#connect = connect;
    this.#settings = options;
    this.options = { reconnectPeriod: options.reconnectPeriod ?? 1000 };
    const cert = options.clientCert;
    if (typeof cert === 'function') {
      // mqtt.js builds its stream synchronously: a certificate read from files is read first.
      cert().then(
        (loaded) => this.#open(loaded),
        (error: Error) => {
          this.emit('error', error);
          this.emit('close');
        },
      );
    } else this.#open(cert);
  }

  get connected(): boolean {
    return this.#client?.connected === true;
  }

  #open(clientCert: ClientCertificate | undefined): void {
    if (this.#ending) return;
    const settings = this.#settings;
    const clean = settings.clean ?? true;
    const properties: NonNullable<IClientOptions['properties']> = {};
    if (!clean) properties.sessionExpiryInterval = settings.sessionExpirySeconds ?? DEFAULT_SESSION_EXPIRY_SECONDS;
    if (settings.maxIncomingPacketBytes !== undefined) properties.maximumPacketSize = settings.maxIncomingPacketBytes;
    const will = settings.will;
    /** The will of the next CONNECT, afresh each time (the station's describes its session). */
    const nextWill = (): NonNullable<IClientOptions['will']> | undefined => {
      if (will === undefined) return undefined;
      const current = typeof will === 'function' ? will() : will;
      return { topic: current.topic, payload: current.payload, qos: current.qos, retain: current.retain };
    };
    const firstWill = nextWill();
    // mqtt.js writes the first CONNECT inside its constructor: its will goes in the options.
    const client = this.#connect({
      ...(firstWill === undefined ? {} : { will: firstWill }),
      protocolVersion: 5,
      clientId: settings.clientId,
      clean,
      keepalive: settings.keepalive ?? 60,
      reconnectPeriod: this.options.reconnectPeriod,
      connectTimeout: settings.connectTimeout ?? 30_000,
      // Subscriptions are made again by the callers on 'connect' (as with the lean client), where
      // they can wait for the SUBACK; a broker that kept the session kept them too.
      resubscribe: false,
      ...(settings.username === undefined ? {} : { username: settings.username }),
      ...(settings.password === undefined ? {} : { password: settings.password }),
      ...(Object.keys(properties).length > 0 ? { properties } : {}),
      ...(clientCert ? { clientCert } : {}),
    });
    this.#client = client;
    if (will !== undefined) {
      // Each reconnect's will is built before its CONNECT: mqtt.js emits 'reconnect', then reads
      // `options.will` as it writes the packet.
      client.on('reconnect', () => {
        client.options.will = nextWill();
      });
    }
    // Before mqtt.js's own 'close' handler (which schedules the reconnect): the wait it will use.
    client.prependListener('close', () => {
      // A clean session's state ends with its connection (3.1.2.4), as with the lean client: what the
      // broker has not acknowledged fails now ('Message removed') and is not sent again on the next
      // connection, where mqtt.js would replay it, so no unlock goes out after its caller was answered.
      if (clean) for (const id of Object.keys(client.outgoing)) client.removeOutgoingMessage(Number(id));
      if (this.#ending || this.options.reconnectPeriod === 0) return;
      this.#reconnectAttempt += 1;
      const delay = settings.reconnectDelay?.(this.#reconnectAttempt) ?? this.options.reconnectPeriod;
      client.options.reconnectPeriod = Math.max(1, delay);
    });
    client.on('connect', (connack) => {
      this.#reconnectAttempt = 0;
      this.emit('connect', { sessionPresent: connack.sessionPresent, reasonCode: connack.reasonCode ?? 0 });
    });
    client.on('close', () => this.emit('close'));
    client.on('error', (error) => this.emit('error', error));
    client.on('message', (topic, payload, packet) => {
      const info: { retain: boolean; qos: 0 | 1 | 2; properties?: PublishProperties } = { retain: packet.retain, qos: packet.qos };
      const given = packet.properties;
      if (given) {
        const properties: PublishProperties = {};
        if (given.messageExpiryInterval !== undefined) properties.messageExpiryInterval = given.messageExpiryInterval;
        if (given.userProperties !== undefined) properties.userProperties = given.userProperties;
        if (given.responseTopic !== undefined) properties.responseTopic = given.responseTopic;
        if (given.correlationData !== undefined) properties.correlationData = given.correlationData;
        info.properties = properties;
      }
      this.emit('message', topic, payload, info);
    });
  }

  publish(topic: string, message: string | Buffer, opts: { qos: 0 | 1; retain?: boolean; properties?: PublishProperties }, callback?: (error?: Error) => void): this {
    const client = this.#client;
    if (!client?.connected) {
      callback?.(new Error('client disconnected'));
      return this;
    }
    const options: IClientPublishOptions = { qos: opts.qos, retain: opts.retain === true };
    if (opts.properties) options.properties = opts.properties;
    client.publish(topic, message, options, (error) => callback?.(error ?? undefined));
    return this;
  }

  publishAsync(topic: string, message: string | Buffer, opts: { qos: 0 | 1; retain?: boolean; properties?: PublishProperties }): Promise<void> {
    return new Promise((resolve, reject) => this.publish(topic, message, opts, (error) => (error ? reject(error) : resolve())));
  }

  subscribe(topic: string, opts: { qos: 0 | 1 }, callback?: (error: Error | null) => void): this {
    this.subscribeAsync({ [topic]: opts }).then(
      (granted) => {
        const refused = granted.find((grant) => grant.qos === 128);
        if (!refused) return callback?.(null);
        const code = refused.reasonCode ?? 0x80;
        callback?.(Object.assign(new Error(`Subscribe error: the broker refused ${topic} (SUBACK reason code ${hexReasonCode(code)})`), { code }));
      },
      (error: Error) => callback?.(error),
    );
    return this;
  }

  subscribeAsync(subscriptions: Record<string, { qos: 0 | 1 }>): Promise<{ topic: string; qos: number; reasonCode?: number }[]> {
    const client = this.#client;
    if (!client?.connected) return Promise.reject(new Error('client disconnected'));
    const topics = Object.keys(subscriptions);
    return new Promise((resolve, reject) => {
      client.subscribe(subscriptions, (error, _granted, packet) => {
        // A refused filter fails mqtt.js's subscribe, with the SUBACK it came in: read it per filter.
        const codes = packet?.granted;
        if (!codes || codes.length !== topics.length) {
          if (error) reject(error);
          else resolve(topics.map((topic) => ({ topic, qos: subscriptions[topic]!.qos })));
          return;
        }
        resolve(
          topics.map((topic, i) => {
            const code = typeof codes[i] === 'number' ? codes[i] : (codes[i] as { qos: number }).qos;
            return code >= 0x80 ? { topic, qos: 128, reasonCode: code } : { topic, qos: code };
          }),
        );
      });
    });
  }

  end(force?: boolean): this {
    this.#ending = true;
    this.#client?.end(force === true);
    return this;
  }

  async endAsync(force?: boolean): Promise<void> {
    this.#ending = true;
    await this.#client?.endAsync(force === true);
  }
}
