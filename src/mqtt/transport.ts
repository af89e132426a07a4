/**
 * How an MQTT client reaches its broker. In-process clients get a real MQTT session over an
 * in-memory stream into aedes; everything else uses TCP with TCP_NODELAY set on every socket,
 * including after each reconnect (Nagle's algorithm adds about 44 ms per round trip on loopback).
 */
import { redactUrl } from '../shared/redact-url.js';
import net from 'node:net';
import { MqttClient, type IClientOptions } from 'mqtt';
import { duplexPair } from './duplex-pair.js';
import { LeanMqttClient, type LeanClientOptions, type MqttSession } from './lean-client.js';
import { SimError } from '../errors.js';
import type { StreamAcceptor } from './broker-link.js';

export type MqttTransport = { kind: 'memory'; broker: StreamAcceptor } | { kind: 'tcp'; url: string };

/** A broker address split into what a socket needs and what the CONNECT packet needs. */
export interface BrokerAddress {
  host: string;
  port: number;
  username?: string;
  password?: string;
}

/** Parses `mqtt://[user:pass@]host[:port]` (also `tcp://`). */
export function parseBrokerUrl(url: string): BrokerAddress {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    // A password typed with # or ? in it makes the rest of the URL a fragment or a query.
    const hint = url.includes('@') ? ' (percent-encode any #, ?, / or @ in the user name or password)' : '';
    throw new SimError('BROKER_UNREACHABLE', `Invalid broker URL "${redactUrl(url)}": expected mqtt://host:port${hint}`);
  }
  if (parsed.protocol !== 'mqtt:' && parsed.protocol !== 'tcp:') {
    throw new SimError('BROKER_UNREACHABLE', `Unsupported broker URL scheme "${parsed.protocol}" (use mqtt://host:port)`);
  }
  const address: BrokerAddress = {
    host: parsed.hostname.replace(/^\[|\]$/g, '') || 'localhost',
    port: parsed.port === '' ? 1883 : Number(parsed.port),
  };
  const invalid = (why: string): SimError => new SimError('BROKER_UNREACHABLE', `Invalid broker URL "${redactUrl(url)}": ${why}`);
  try {
    if (parsed.username) address.username = decodeURIComponent(parsed.username);
    if (parsed.password) address.password = decodeURIComponent(parsed.password);
  } catch {
    throw invalid('the user name or password is not percent-encoded (write % as %25)');
  }
  // MQTT 3.1.1 has no password without a user name [MQTT-3.1.2-22].
  if (address.password !== undefined && address.username === undefined) throw invalid('a password needs a user name');
  return address;
}


function silentLog(): void {}

/**
 * How long a connection may wait for its CONNACK before it counts as failed, as the lean clients
 * do: mqtt.js's own default (30 s) left a port that takes TCP and never answers hanging for about
 * 32 s before `start` failed.
 */
export const CONNECT_TIMEOUT_MS = 10_000;

/**
 * Creates an mqtt.js client that connects (and reconnects) through `transport`.
 *
 * A refused CONNACK (return code 3 "server unavailable" while EMQX or HiveMQ start, 5 "not
 * authorized" while a password is being changed) does not end the reconnecting: mqtt.js 5 stops
 * for good after one unless `reconnectOnConnackError` is set, which would leave the control plane
 * and the fleet agent cut off until restarted while the lean clients came back. A refusal of the
 * first connection still fails the start: `firstConnect` ends the client on its first error.
 */
export function createMqttClient(transport: MqttTransport, options: IClientOptions): MqttClient {
  // A shared no-op logger: by default mqtt.js makes a `debug` instance per client, about 1 KiB
  // each, which a 100,000-station fleet pays 100,000 times (heap snapshot, bench/README.md).
  const base: IClientOptions = {
    protocolVersion: 4,
    log: silentLog,
    connectTimeout: CONNECT_TIMEOUT_MS,
    reconnectOnConnackError: true,
    ...options,
  };
  if (transport.kind === 'memory') {
    const { broker } = transport;
    return new MqttClient(() => {
      const [client, server] = duplexPair();
      broker.handle(server);
      return client;
    }, base);
  }
  const address = parseBrokerUrl(transport.url);
  if (address.username !== undefined) base.username = address.username;
  if (address.password !== undefined) base.password = address.password;
  return new MqttClient(() => net.connect({ host: address.host, port: address.port, noDelay: true }), base);
}

/**
 * A session of the product's own hot path (stations, the API's gateway): the lean client
 * (lean-client.ts), in memory or over TCP. A fleet holds many of these in one thread, and mqtt.js
 * cost more per packet than the broker itself. Subscriptions are not renewed by the client after a
 * reconnect: the callers do it in their 'connect' handler, where they can wait for the SUBACK.
 */
export function createSession(transport: MqttTransport, options: LeanClientOptions): MqttSession {
  if (transport.kind === 'memory') return new LeanMqttClient(transport.broker, options);
  const address = parseBrokerUrl(transport.url);
  return new LeanMqttClient(
    { kind: 'tcp', host: address.host, port: address.port },
    {
      ...options,
      ...(address.username === undefined ? {} : { username: address.username }),
      ...(address.password === undefined ? {} : { password: address.password }),
    },
  );
}

/** The broker as messages name it: its URL without credentials, or nothing for the in-process broker. */
export function brokerLabel(transport: MqttTransport): string | undefined {
  return transport.kind === 'tcp' ? redactUrl(transport.url) : undefined;
}

/**
 * Turns a socket error or a refused CONNACK into one catalogue error that names the broker
 * (without credentials). CONNACK return codes 4 and 5 are "bad user name or password" and "not
 * authorized" (MQTT 3.1.1, section 3.2.2.3).
 */
export function connectError(error: Error & { code?: string | number }, brokerUrl?: string): SimError {
  if (error instanceof SimError) return error;
  const where = brokerUrl === undefined ? '' : ` at ${brokerUrl}`;
  if (error.code === 4 || error.code === 5 || /not authori[sz]ed|bad user ?name or password/i.test(error.message)) {
    const reason = error.message.replace(/^Connection refused: /i, '');
    return new SimError('BROKER_REFUSED', `The MQTT broker${where} refused the connection: ${reason}`, { cause: error });
  }
  const reason = typeof error.code === 'string' ? error.code : error.message;
  return new SimError('BROKER_UNREACHABLE', `The MQTT broker${where} cannot be reached (${reason})`, { cause: error });
}

/**
 * Resolves on the client's first CONNACK; on a failure first, ends the client and rejects with
 * `connectError`. Errors after that are the caller's to handle (both clients reconnect by themselves).
 */
export function firstConnect(client: MqttSession, transport: MqttTransport): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const onError = (error: Error): void => {
      client.off('connect', onConnect);
      client.end(true);
      reject(connectError(error, brokerLabel(transport)));
    };
    const onConnect = (): void => {
      client.off('error', onError);
      resolve();
    };
    client.once('error', onError);
    client.once('connect', onConnect);
  });
}
