/**
 * How an MQTT client reaches its broker. In-process clients get a real MQTT session over an
 * in-memory stream into aedes; everything else uses TCP with TCP_NODELAY set on every socket,
 * including after each reconnect (Nagle's algorithm adds about 44 ms per round trip on loopback).
 */
import net from 'node:net';
import type { Duplex } from 'node:stream';
import { MqttClient, type IClientOptions } from 'mqtt';
import { duplexPair } from './duplex-pair.js';
import { SimError } from '../errors.js';

/** Anything that accepts an MQTT connection as a duplex stream, such as `aedes.handle`. */
export interface StreamAcceptor {
  handle(stream: Duplex): void;
}

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
    throw new SimError('BROKER_UNREACHABLE', `Invalid broker URL "${redactUrl(url)}": expected mqtt://host:port`);
  }
  if (parsed.protocol !== 'mqtt:' && parsed.protocol !== 'tcp:') {
    throw new SimError('BROKER_UNREACHABLE', `Unsupported broker URL scheme "${parsed.protocol}" (use mqtt://host:port)`);
  }
  const address: BrokerAddress = {
    host: parsed.hostname.replace(/^\[|\]$/g, '') || 'localhost',
    port: parsed.port === '' ? 1883 : Number(parsed.port),
  };
  if (parsed.username) address.username = decodeURIComponent(parsed.username);
  if (parsed.password) address.password = decodeURIComponent(parsed.password);
  return address;
}

/** The URL without credentials, for logs and messages. */
export function redactUrl(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//***@');
}

/** Creates an mqtt.js client that connects (and reconnects) through `transport`. */
export function createMqttClient(transport: MqttTransport, options: IClientOptions): MqttClient {
  const base: IClientOptions = { protocolVersion: 4, ...options };
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
