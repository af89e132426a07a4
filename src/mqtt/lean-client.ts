/**
 * A lean MQTT 3.1.1 client: what a virtual station (or the API's gateway) needs (CONNECT with a
 * last will and credentials, SUBSCRIBE, PUBLISH at QoS 0 and 1, PUBACK, PINGREQ with a PINGRESP
 * deadline, DISCONNECT, reconnect), over an in-memory connection into the embedded broker or over
 * TCP to any broker.
 *
 * Why not mqtt.js: a fleet runs up to 100,000 of these in one thread, and each unlock passes about
 * ten packets through station sessions. mqtt.js pays per client for a Writable stream, an
 * outgoing store, a keepalive manager and per-packet stream plumbing; in memory that plumbing was
 * the largest single cost of an unlock in the CPU profile (bench/README.md). Here packets from the
 * broker are read straight out of what arrives, and packets to the broker go out as one buffer each
 * (packet-codec.ts for the hot packets, mqtt-packet for CONNECT and SUBSCRIBE). The broker still
 * sees an ordinary MQTT connection, with its own session, last will and retained state.
 *
 * The API is the subset of mqtt.js's `MqttClient` that the station binding and the API's gateway
 * use (`MqttSession`), so they read the same with either.
 */
import { EventEmitter } from 'node:events';
import net from 'node:net';
import { Duplex } from 'node:stream';
import mqttPacket, { type Packet } from 'mqtt-packet';
import { encodePuback, encodePublish, readPackets, type IncomingPacket } from './packet-codec.js';
import type { LinkEnd, LinkPeer, StreamAcceptor } from './transport.js';

/** Where a lean client connects: into a broker in this process, or to a broker's TCP port. */
export type LeanTarget = { kind: 'memory'; broker: StreamAcceptor } | { kind: 'tcp'; host: string; port: number };

/** What the station binding and the gateway use of an MQTT client; mqtt.js's `MqttClient` has the same shape. */
export interface MqttSession {
  readonly connected: boolean;
  readonly options: { reconnectPeriod?: number };
  publish(topic: string, message: string | Buffer, opts: { qos: 0 | 1; retain?: boolean }, callback?: (error?: Error) => void): unknown;
  publishAsync(topic: string, message: string | Buffer, opts: { qos: 0 | 1; retain?: boolean }): Promise<unknown>;
  subscribe(topic: string, opts: { qos: 0 | 1 }, callback?: (error: Error | null) => void): unknown;
  /** Resolves with what the broker granted, a QoS or 128 (refused) per filter (MQTT 3.1.1, section 3.9.3). */
  subscribeAsync(subscriptions: Record<string, { qos: 0 | 1 }>): Promise<{ topic: string; qos: number }[]>;
  end(force?: boolean): unknown;
  endAsync(force?: boolean): Promise<void>;
  on(event: 'message', listener: (topic: string, payload: Buffer) => void): unknown;
  on(event: 'connect' | 'close', listener: () => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
  once(event: 'connect', listener: () => void): unknown;
  once(event: 'error', listener: (error: Error) => void): unknown;
  off(event: 'connect', listener: () => void): unknown;
  off(event: 'error', listener: (error: Error) => void): unknown;
  removeAllListeners(event?: 'connect' | 'close' | 'error' | 'message'): unknown;
}

export interface LeanClientOptions {
  clientId: string;
  /** @default true */
  clean?: boolean;
  /**
   * Seconds of silence after which a PINGREQ goes out; 0 turns keepalive off. The broker drops a
   * session it has not heard from for 1.5× this (MQTT 3.1.1, section 3.1.2.10).
   * @default 60
   */
  keepalive?: number;
  /** Delay before reconnecting after the broker closed the session; 0 means never. @default 1000 */
  reconnectPeriod?: number;
  /** How long to wait for the CONNACK. @default 30000 */
  connectTimeout?: number;
  will?: { topic: string; payload: Buffer; qos: 0 | 1; retain: boolean };
  username?: string;
  password?: string;
}

/** A CONNACK refusal, with the return code as `code` like mqtt.js's errors (MQTT 3.1.1, 3.2.2.3). */
class ConnackError extends Error {
  constructor(readonly code: number) {
    super(`Connection refused: ${CONNACK_REASONS[code] ?? `return code ${code}`}`);
  }
}

const CONNACK_REASONS: Record<number, string> = {
  1: 'Unacceptable protocol version',
  2: 'Identifier rejected',
  3: 'Server unavailable',
  4: 'Bad username or password',
  5: 'Not authorized',
};

type Done = (error?: Error, packet?: IncomingPacket) => void;

export class LeanMqttClient extends EventEmitter implements MqttSession {
  readonly options: { reconnectPeriod: number };
  readonly #settings: Required<Omit<LeanClientOptions, 'will' | 'reconnectPeriod' | 'username' | 'password'>> &
    Pick<LeanClientOptions, 'will' | 'username' | 'password'>;
  readonly #target: LeanTarget;
  #link: Link | undefined;
  #connected = false;
  /** end() was called: no reconnect, and the next close is final. */
  #ending = false;
  #nextId = 0;
  /** QoS 1 publications and subscriptions waiting for their PUBACK / SUBACK, by packet id. */
  readonly #inflight = new Map<number, Done>();
  #keepaliveTimer: NodeJS.Timeout | undefined;
  #sentSinceTick = false;
  /** Keepalive checks since a PINGREQ went out with nothing come back (0: none waiting). */
  #unansweredChecks = 0;
  #connectTimer: NodeJS.Timeout | undefined;
  #reconnectTimer: NodeJS.Timeout | undefined;

  /** `target` may also be a broker in this process as such (`aedes.handle`, a broker thread). */
  constructor(target: LeanTarget | StreamAcceptor, options: LeanClientOptions) {
    super();
    this.#target = 'kind' in target ? target : { kind: 'memory', broker: target };
    this.options = { reconnectPeriod: options.reconnectPeriod ?? 1000 };
    this.#settings = {
      clientId: options.clientId,
      clean: options.clean ?? true,
      keepalive: options.keepalive ?? 60,
      connectTimeout: options.connectTimeout ?? 30_000,
      will: options.will,
      username: options.username,
      password: options.password,
    };
    this.#open();
  }

  get connected(): boolean {
    return this.#connected;
  }

  publish(topic: string, message: string | Buffer, opts: { qos: 0 | 1; retain?: boolean }, callback?: Done): this {
    if (!this.#connected) {
      callback?.(new Error('client disconnected'));
      return this;
    }
    if (opts.qos === 0) {
      this.#send(encodePublish(topic, message, 0, opts.retain === true, 0));
      callback?.();
      return this;
    }
    const id = this.#allocateId(callback ?? noop);
    this.#send(encodePublish(topic, message, 1, opts.retain === true, id));
    return this;
  }

  publishAsync(topic: string, message: string | Buffer, opts: { qos: 0 | 1; retain?: boolean }): Promise<void> {
    return new Promise((resolve, reject) => this.publish(topic, message, opts, (error) => (error ? reject(error) : resolve())));
  }

  subscribe(topic: string, opts: { qos: 0 | 1 }, callback?: (error: Error | null) => void): this {
    this.subscribeAsync({ [topic]: opts }).then(
      (granted) => callback?.(granted.some((grant) => grant.qos === 128) ? new Error(`subscription to ${topic} refused`) : null),
      (error: Error) => callback?.(error),
    );
    return this;
  }

  subscribeAsync(subscriptions: Record<string, { qos: 0 | 1 }>): Promise<{ topic: string; qos: number }[]> {
    const list = Object.entries(subscriptions).map(([topic, { qos }]) => ({ topic, qos }));
    return new Promise((resolve, reject) => {
      if (!this.#connected) {
        reject(new Error('client disconnected'));
        return;
      }
      const messageId = this.#allocateId((error, packet) => {
        if (error) reject(error);
        else resolve(list.map(({ topic }, index) => ({ topic, qos: packet?.cmd === 'suback' ? (packet.granted[index] ?? 128) : 128 })));
      });
      this.#send(mqttPacket.generate({ cmd: 'subscribe', messageId, subscriptions: list }));
    });
  }

  /** Closes the session: with `force`, by dropping the stream (the broker fires the last will); otherwise with DISCONNECT. */
  end(force = false, callback?: () => void): this {
    this.#ending = true;
    clearTimeout(this.#reconnectTimer);
    const link = this.#link;
    if (!link) {
      if (callback) queueMicrotask(callback);
      return this;
    }
    if (callback) this.once('close', callback);
    if (!force && this.#connected) {
      this.#send(DISCONNECT);
      link.push(null);
    } else {
      link.destroy();
    }
    return this;
  }

  endAsync(force = false): Promise<void> {
    return new Promise((resolve) => this.end(force, resolve));
  }

  #open(): void {
    const link = this.#connectLink();
    this.#link = link;
    const { clientId, clean, keepalive, will, username, password } = this.#settings;
    const connect: Packet = { cmd: 'connect', protocolId: 'MQTT', protocolVersion: 4, clean, clientId, keepalive };
    if (will) connect.will = will;
    if (username !== undefined) connect.username = username;
    if (password !== undefined) connect.password = Buffer.from(password);
    this.#connectTimer = setTimeout(() => {
      this.#emitError(new Error('connack timeout'));
      link.destroy();
    }, this.#settings.connectTimeout);
    link.push(mqttPacket.generate(connect));
  }

  #connectLink(): Link {
    const target = this.#target;
    if (target.kind === 'tcp') return new SocketLink(this, target);
    const { broker } = target;
    if (broker.attach) return new DirectLink(this, broker.attach.bind(broker));
    const link = new BrokerLink(this);
    broker.handle(link);
    return link;
  }

  /**
   * Errors are reported to whoever listens; a session nobody listens to for errors (a short-lived
   * one, say) closes and reconnects without throwing, as the 'close' event tells.
   */
  #emitError(error: Error): void {
    if (this.listenerCount('error') > 0) this.emit('error', error);
  }

  #send(packet: Buffer): void {
    this.#sentSinceTick = true;
    this.#link?.push(packet);
  }

  #allocateId(done: Done): number {
    // Packet ids are 1..65535 and must not be reused while in flight (MQTT 3.1.1, section 2.3.1).
    do this.#nextId = this.#nextId === 65535 ? 1 : this.#nextId + 1;
    while (this.#inflight.has(this.#nextId));
    this.#inflight.set(this.#nextId, done);
    return this.#nextId;
  }

  /** A packet from the broker; called by the link's reader only. @internal */
  onPacket(packet: IncomingPacket): void {
    this.#unansweredChecks = 0;
    switch (packet.cmd) {
      case 'publish': {
        this.emit('message', packet.topic, packet.payload, packet);
        if (packet.qos === 1 && this.#connected) this.#send(encodePuback(packet.messageId!));
        return;
      }
      case 'puback':
      case 'suback': {
        const done = this.#inflight.get(packet.messageId);
        if (!done) return;
        this.#inflight.delete(packet.messageId);
        done(undefined, packet);
        return;
      }
      case 'connack': {
        clearTimeout(this.#connectTimer);
        if (packet.returnCode !== 0) {
          this.#emitError(new ConnackError(packet.returnCode));
          this.#link?.destroy();
          return;
        }
        this.#connected = true;
        this.#scheduleKeepalive();
        this.emit('connect', packet);
        return;
      }
      default:
        return; // PINGRESP; QoS 2 is never subscribed to, so never delivered
    }
  }

  /** The connection to the broker closed, whoever closed it; called by the link only. @internal */
  onLinkClosed(link: Link): void {
    if (link !== this.#link) return;
    this.#link = undefined;
    this.#connected = false;
    this.#unansweredChecks = 0;
    clearTimeout(this.#connectTimer);
    clearTimeout(this.#keepaliveTimer);
    // Unacknowledged publications are not replayed on the next session: the station republishes
    // its whole state when it reconnects, and a stale command answer is worth nothing.
    const waiting = [...this.#inflight.values()];
    this.#inflight.clear();
    for (const done of waiting) done(new Error('connection closed'));
    this.emit('close');
    if (!this.#ending && this.options.reconnectPeriod > 0) {
      this.#reconnectTimer = setTimeout(() => {
        if (!this.#ending) this.#open();
      }, this.options.reconnectPeriod);
    }
  }

  /** @internal */
  onLinkError(error: Error): void {
    this.#emitError(error);
  }

  /**
   * A PINGREQ when nothing was sent for half a keepalive period: checking every half period keeps
   * silence under 1.5× keepalive without touching a timer on every packet. Over TCP, a PINGREQ
   * that nothing answered for a whole keepalive period (two checks) means the connection is dead
   * without having closed (a broker or a network that went away): it is dropped, and the client
   * reconnects. In memory a connection cannot die silently, and a busy thread must not look dead.
   */
  #scheduleKeepalive(): void {
    const seconds = this.#settings.keepalive;
    if (seconds <= 0) return;
    this.#keepaliveTimer = setTimeout(() => {
      if (!this.#connected) return;
      if (this.#unansweredChecks > 0 && this.#target.kind === 'tcp') {
        this.#unansweredChecks += 1;
        if (this.#unansweredChecks > 2) {
          this.#emitError(new Error('no PINGRESP within the keepalive period'));
          this.#link?.destroy();
          return;
        }
      } else if (!this.#sentSinceTick) {
        this.#send(PINGREQ);
        this.#unansweredChecks = 1;
      }
      this.#sentSinceTick = false;
      this.#scheduleKeepalive();
    }, (seconds * 1000) / 2);
    this.#keepaliveTimer.unref();
  }
}

/** The client's end of its connection to the broker: one packet a push, `null` after DISCONNECT. */
interface Link {
  push(packet: Buffer | null): unknown;
  destroy(error?: Error): unknown;
}

/**
 * Whole packets out of what the broker sends (`readPackets`), for the client; the start of a
 * packet cut short waits here for the rest. Shared by the three kinds of link.
 */
class PacketReader {
  readonly #client: LeanMqttClient;
  readonly #isOpen: () => boolean;
  /** The start of a packet whose rest has not arrived yet. */
  #partial: Buffer | undefined;

  constructor(client: LeanMqttClient, isOpen: () => boolean) {
    this.#client = client;
    this.#isOpen = isOpen;
  }

  /** Hands each whole packet to the client while the link is open; returns the error of a malformed one. */
  feed(chunk: Buffer): Error | undefined {
    if (!this.#isOpen()) return undefined;
    const data = this.#partial ? Buffer.concat([this.#partial, chunk]) : chunk;
    this.#partial = undefined;
    try {
      const read = readPackets(data, (packet) => {
        if (this.#isOpen()) this.#client.onPacket(packet);
      });
      if (read < data.length) this.#partial = data.subarray(read);
      return undefined;
    } catch (error) {
      return error as Error;
    }
  }

  clear(): void {
    this.#partial = undefined;
  }
}

/**
 * The broker's end of the connection: a real Duplex, as `aedes.handle` expects. What the broker
 * writes is parsed for the client at once; what the client sends is pushed as one chunk a packet.
 */
class BrokerLink extends Duplex implements Link {
  readonly #client: LeanMqttClient;
  readonly #reader: PacketReader;
  #closed = false;

  constructor(client: LeanMqttClient) {
    super({ allowHalfOpen: false });
    this.#client = client;
    this.#reader = new PacketReader(client, () => !this.#closed);
  }

  override _read(): void {}

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.#receive(chunk);
    callback();
  }

  override _writev(chunks: { chunk: Buffer }[], callback: (error?: Error | null) => void): void {
    this.#receive(chunks.length === 1 ? chunks[0]!.chunk : Buffer.concat(chunks.map(({ chunk }) => chunk)));
    callback();
  }

  #receive(chunk: Buffer): void {
    const error = this.#reader.feed(chunk);
    if (error) this.destroy(error);
  }

  override _final(callback: (error?: Error | null) => void): void {
    callback();
    this.destroy();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    if (!this.#closed) {
      this.#closed = true;
      this.#reader.clear();
      if (error) this.#client.onLinkError(error);
      this.#client.onLinkClosed(this);
    }
    callback(error);
  }
}

/**
 * A connection through a broker's `attach` (a broker on another thread): no stream on this side,
 * since the bytes cross to the broker's thread in batches anyway. It behaves as `BrokerLink` does:
 * the client hears of a close it caused on a later microtask, as it would from a stream.
 */
class DirectLink implements Link, LinkPeer {
  readonly #client: LeanMqttClient;
  readonly #reader: PacketReader;
  readonly #end: LinkEnd;
  #closed = false;

  constructor(client: LeanMqttClient, attach: (peer: LinkPeer) => LinkEnd) {
    this.#client = client;
    this.#reader = new PacketReader(client, () => !this.#closed);
    this.#end = attach(this);
  }

  push(packet: Buffer | null): void {
    if (this.#closed) return;
    if (packet) {
      this.#end.send(packet);
      return;
    }
    this.#end.end();
    this.#close();
  }

  destroy(error?: Error): void {
    if (this.#closed) return;
    this.#end.destroy();
    this.#close(error);
  }

  receive(bytes: Buffer): void {
    const error = this.#reader.feed(bytes);
    if (error) this.destroy(error);
  }

  closed(error?: Error): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#reader.clear();
    if (error) this.#client.onLinkError(error);
    this.#client.onLinkClosed(this);
  }

  #close(error?: Error): void {
    this.#closed = true;
    this.#reader.clear();
    queueMicrotask(() => {
      if (error) this.#client.onLinkError(error);
      this.#client.onLinkClosed(this);
    });
  }
}

/**
 * A connection over TCP, with TCP_NODELAY set on every socket (a reconnect opens a new one):
 * Nagle's algorithm adds about 44 ms per round trip on loopback.
 */
class SocketLink implements Link {
  readonly #client: LeanMqttClient;
  readonly #reader: PacketReader;
  readonly #socket: net.Socket;
  #closed = false;

  constructor(client: LeanMqttClient, address: { host: string; port: number }) {
    this.#client = client;
    this.#reader = new PacketReader(client, () => !this.#closed);
    const socket = net.connect({ host: address.host, port: address.port, noDelay: true });
    this.#socket = socket;
    socket.on('data', (chunk: Buffer) => {
      const error = this.#reader.feed(chunk);
      if (error) socket.destroy(error);
    });
    socket.on('error', (error) => {
      if (!this.#closed) this.#client.onLinkError(error);
    });
    socket.on('close', () => {
      if (this.#closed) return;
      this.#closed = true;
      this.#reader.clear();
      this.#client.onLinkClosed(this);
    });
  }

  /** Written before the socket connects, a packet waits in the socket's buffer. */
  push(packet: Buffer | null): void {
    if (this.#closed || this.#socket.destroyed) return;
    if (packet) this.#socket.write(packet);
    else this.#socket.end();
  }

  destroy(error?: Error): void {
    this.#socket.destroy(error);
  }
}

const PINGREQ = Buffer.from([0xc0, 0]);
const DISCONNECT = Buffer.from([0xe0, 0]);

function noop(): void {}

