/**
 * A lean MQTT 3.1.1 client: what a virtual station (or the API's gateway) needs, over an in-memory
 * connection into the embedded broker or over TCP to any broker. It carries every station and
 * gateway session, other people's brokers included, so it is a correct client for the subset it
 * claims, and refuses the rest instead of ignoring it.
 *
 * Supported (section numbers of MQTT 3.1.1, OASIS Standard, 29 October 2014):
 * - CONNECT (3.1) with protocol level 4, clean session (3.1.2.4), last will at QoS 0/1 with retain
 *   (3.1.2.5-3.1.2.7), keepalive (3.1.2.10), user name and password (3.1.3.4, 3.1.3.5).
 * - CONNACK (3.2): return codes 1-5 refused with an error naming them (3.2.2.3); session present
 *   (3.2.2.2) is surfaced as `sessionPresent` on the 'connect' event. With `clean: false` and
 *   session present 1 the broker kept the subscriptions (the station binding does not subscribe
 *   again); with session present 0 it lost them, and the caller must subscribe again. A second
 *   CONNACK on one connection, or session present 1 to a clean session [MQTT-3.2.2-1], closes the
 *   connection as a protocol violation.
 * - PUBLISH (3.3) at QoS 0 and 1 both ways, RETAIN (3.3.1.3), DUP (3.3.1.1): set on a QoS 1
 *   publication sent again; an incoming DUP is delivered like any other (QoS 1 is at least once).
 * - PUBACK (3.4): sent for every incoming QoS 1 PUBLISH, in the order received (4.6), even when a
 *   'message' listener throws; an incoming one completes the publication with its packet id.
 * - SUBSCRIBE / SUBACK (3.8, 3.9) at QoS 0 and 1, the granted QoS or 128 per filter.
 * - PINGREQ / PINGRESP (3.12, 3.13): see `#scheduleKeepalive`.
 * - DISCONNECT (3.14): nothing is sent after it [MQTT-3.14.4-2].
 * - Message delivery retry (4.4): with `clean: false`, QoS 1 publications not acknowledged when a
 *   connection closes are kept (topic, payload, retain, packet id) and sent again first on the next
 *   connection, in the order first sent, with DUP and the same packet id [MQTT-4.4.0-1], whether or
 *   not the broker kept the session. With `clean: true` the session state is discarded with the
 *   connection (3.1.2.4): they fail with 'connection closed', and nothing is sent again. A
 *   SUBSCRIBE in flight fails either way (4.4 retries only PUBLISH and PUBREL).
 * - Message ordering (4.6): publications leave in the order published, QoS 0 and 1 in one queue
 *   (a QoS 0 one waits behind a QoS 1 one held by the in-flight cap), resends before anything new.
 * - Flow control (not in the spec, which leaves it to implementations, 4.4 non-normative): at most
 *   `maxInflight` QoS 1 publications wait for their PUBACK; beyond that, and while the socket holds
 *   more than `writeHighWaterBytes` unsent, publications wait in a queue of at most `maxQueued`,
 *   and go out as PUBACKs come back and the socket drains. One more fails at once ('publish queue
 *   full'). Nothing buffers without bound; `flow` tells what waits.
 *
 * Not supported, and refused:
 * - QoS 2 (4.3.3): a publication, subscription or will at QoS 2 asked by the caller throws a
 *   RangeError; a QoS 2 PUBLISH from the broker (which may send at most the granted QoS, 3.8.4)
 *   closes the connection as a protocol violation (4.8) rather than leaving the broker waiting
 *   for a PUBREC. PUBREC, PUBREL and PUBCOMP from the broker close it as malformed.
 * - UNSUBSCRIBE / UNSUBACK (3.10, 3.11): `unsubscribe` throws; an UNSUBACK closes the connection.
 * - Publishing while disconnected: fails at once with 'client disconnected' (mqtt.js would queue
 *   it); only what was accepted while connected survives a reconnect, and only with clean: false.
 * - MQTT 3.1 (protocol level 3) and MQTT 5: CONNECT always says level 4.
 *
 * Why not mqtt.js: a fleet runs up to 100,000 of these in one thread, and each unlock passes about
 * ten packets through station sessions. mqtt.js pays per client for a Writable stream, an
 * outgoing store, a keepalive manager and per-packet stream plumbing; in memory that plumbing was
 * the largest single cost of an unlock in the CPU profile (bench/README.md). Here packets from the
 * broker are read straight out of what arrives, and packets to the broker go out as one buffer each
 * (packet-codec.ts for the hot packets, mqtt-packet for CONNECT and SUBSCRIBE). The broker still
 * sees an ordinary MQTT connection, with its own session, last will and retained state.
 *
 * TCP sessions stay on this client too, not mqtt.js: the semantics above cost about 200 lines
 * with their comments, shared by every link, and TLS and WebSocket are links over Node's own
 * sockets, not protocol code; mqtt.js takes about twice the JS heap per idle session and brings
 * back its per-packet plumbing (`node --expose-gc --import tsx bench/lean-idle-memory.ts
 * lean|mqttjs 1000` measures both). The semantics cost the hot path little: a clean session keeps
 * nothing for a resend (`node --import tsx bench/lean-hot-path.ts` measures a publication's CPU),
 * and a persistent session keeps each PUBLISH until its PUBACK.
 *
 * The API is the subset of mqtt.js's `MqttClient` that the station binding and the API's gateway
 * use (`MqttSession`), so they read the same with either.
 */
import { EventEmitter } from 'node:events';
import mqttPacket, { type Packet } from 'mqtt-packet';
import { encodePuback, encodePublish, setPublishId, withDup, type IncomingPacket } from '../packet-codec.js';
import type { StreamAcceptor } from '../broker-link.js';
import { callSafely } from '../../shared/throw-later.js';
import { systemClock, type Clock, type TimerHandle } from '../../shared/clock.js';
import type { Link, LinkOwner, LinkShaper } from './link.js';
import { openLink } from './open-link.js';
import type { LeanTarget } from './target.js';

/**
 * The MQTT 5 properties of a PUBLISH that station-sim uses (MQTT 5.0, section 3.3.2.3). Only an MQTT 5
 * session (src/mqtt/mqtt5-session.ts) sends or receives them; callers pass them only to one, as the
 * 3.1.1 protocol has no place for them.
 */
export interface PublishProperties {
  /** Message Expiry Interval, seconds (3.3.2.3.3). */
  messageExpiryInterval?: number;
  /** User Properties (3.3.2.3.7), name to value. */
  userProperties?: Record<string, string | string[]>;
  /** Response Topic (3.3.2.3.5). */
  responseTopic?: string;
  /** Correlation Data (3.3.2.3.6). */
  correlationData?: Buffer;
}

/** How a delivery came: retained or not, its QoS and, over MQTT 5, its properties. */
export interface DeliveryInfo {
  retain: boolean;
  qos?: 0 | 1 | 2;
  properties?: PublishProperties;
}

/** What the station binding and the gateway use of an MQTT client; mqtt.js's `MqttClient` has the same shape. */
export interface MqttSession {
  readonly connected: boolean;
  readonly options: { reconnectPeriod?: number };
  /** `opts.properties` only on an MQTT 5 session (`PublishProperties`). A failure names the PUBACK's reason code over MQTT 5 (`error.code`). */
  publish(topic: string, message: string | Buffer, opts: { qos: 0 | 1; retain?: boolean; properties?: PublishProperties }, callback?: (error?: Error) => void): unknown;
  publishAsync(topic: string, message: string | Buffer, opts: { qos: 0 | 1; retain?: boolean }): Promise<unknown>;
  subscribe(topic: string, opts: { qos: 0 | 1 }, callback?: (error: Error | null) => void): unknown;
  /**
   * Resolves with what the broker granted, a QoS or 128 (refused) per filter (MQTT 3.1.1, section
   * 3.9.3); over MQTT 5 a refusal is 128 too, with the SUBACK's own reason code as `reasonCode`
   * (MQTT 5.0, section 3.9.3: 0x87 not authorized, 0x8F topic filter invalid, …).
   */
  subscribeAsync(subscriptions: Record<string, { qos: 0 | 1 }>): Promise<{ topic: string; qos: number; reasonCode?: number }[]>;
  end(force?: boolean): unknown;
  endAsync(force?: boolean): Promise<void>;
  /** `packet.retain` is set on a retained message sent because of a new subscription (MQTT 3.1.1, 3.3.1.3); `packet.qos` is the delivery's QoS. */
  on(event: 'message', listener: (topic: string, payload: Buffer, packet?: DeliveryInfo) => void): unknown;
  /** `connack.sessionPresent`: the broker kept this client's session, subscriptions included (MQTT 3.1.1, 3.2.2.2). */
  on(event: 'connect', listener: (connack: { sessionPresent: boolean }) => void): unknown;
  on(event: 'close', listener: () => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
  once(event: 'connect' | 'close', listener: () => void): unknown;
  once(event: 'error', listener: (error: Error) => void): unknown;
  off(event: 'connect' | 'close', listener: () => void): unknown;
  off(event: 'error', listener: (error: Error) => void): unknown;
  removeAllListeners(event?: 'connect' | 'close' | 'error' | 'message'): unknown;
}

/** A last will: what the broker publishes for the client when its connection drops without DISCONNECT. */
export interface LastWill {
  topic: string;
  payload: Buffer;
  qos: 0 | 1;
  retain: boolean;
}

export interface LeanClientOptions {
  clientId: string;
  /**
   * Clean session (MQTT 3.1.1, section 3.1.2.4). `true`: the broker and this client start every
   * connection afresh; QoS 1 publications not acknowledged when a connection closes fail with
   * 'connection closed', and subscriptions must be made again. `false`: a persistent session; the
   * client keeps them and sends them again, with DUP and their packet ids, first thing on the next
   * connection [MQTT-4.4.0-1], and the broker keeps subscriptions and queues QoS 1 messages for the
   * client while it is away ('connect' says whether it did: `sessionPresent`).
   * @default true
   */
  clean?: boolean;
  /**
   * QoS 1 publications sent and waiting for their PUBACK at most; more wait in the queue
   * (`maxQueued`) and go out as PUBACKs come back.
   * @default 100
   */
  maxInflight?: number;
  /**
   * Publications waiting to be sent at most, in order: beyond `maxInflight`, or while the link has
   * more than `writeHighWaterBytes` unsent. One more fails at once ('publish queue full').
   * @default 1000
   */
  maxQueued?: number;
  /**
   * Backpressure: while the link holds more than this many bytes not yet written to the network,
   * new publications (QoS 0 and 1) wait in the queue instead of being written, until the socket
   * drains. At least 16 KiB (the socket's own mark, below which it does not tell of a drain). In
   * memory the broker reads what it is given at once, so only `maxInflight` applies.
   * @default 1 MiB
   */
  writeHighWaterBytes?: number;
  /**
   * Seconds of silence after which a PINGREQ goes out; 0 turns keepalive off. The broker drops a
   * session it has not heard from for 1.5× this (MQTT 3.1.1, section 3.1.2.10).
   * @default 60
   */
  keepalive?: number;
  /** Delay before reconnecting after the broker closed the session; 0 means never. @default 1000 */
  reconnectPeriod?: number;
  /**
   * How long to wait before reconnect number `attempt`: 1 for the first after a connection closed,
   * counting up while reconnects fail, and back to 1 once the broker accepts one (CONNACK 0). Asked
   * when the reconnect is scheduled; never asked while `reconnectPeriod` is 0 (no reconnects). A
   * backoff policy goes here (the station binding's is in reconnect-policy.ts).
   * @default the current `options.reconnectPeriod`, whatever the attempt
   */
  reconnectDelay?: (attempt: number) => number;
  /**
   * The timers of the connection: the CONNACK deadline, the keepalive checks and the reconnect
   * delays. Real time by default; tests pass a `ManualClock` to run keepalive and backoff in fake
   * time (STYLE.md, "Seams for testing").
   * @default systemClock
   */
  clock?: Clock;
  /** How long to wait for the CONNACK. @default 30000 */
  connectTimeout?: number;
  /**
   * The last will, sent in every CONNECT. As a function it is called afresh for each CONNECT (the
   * first and every reconnect), so a will that describes the session (a station's status with its
   * connection time and battery) is that session's and not the first one's. MQTT 3.1.1 cannot
   * change a will during a session (section 3.1.2.5): what the function returns holds until the
   * connection closes. What it throws on a reconnect is reported as 'error', and the client tries
   * again after `reconnectPeriod`.
   * @default no last will
   */
  will?: LastWill | (() => LastWill);
  username?: string;
  password?: string;
  /**
   * The largest packet, in bytes with its fixed header, accepted from the broker. A broker may
   * announce up to 268,435,455 bytes of remaining length (MQTT 3.1.1, section 2.2.3), and the
   * client holds it all before reading it; one announced over this limit closes the connection as
   * a malformed packet does ('error', then 'close'), as soon as its fixed header is in.
   * No limit by default, as mqtt.js has none for MQTT 3.1.1: 3.1.1 cannot tell the broker the
   * limit, so an oversized *retained* message on a subscribed topic (anyone may publish one) would
   * come back on every reconnect, and a station or the gateway with a limit would flap forever,
   * where without one it reads the message, finds it is not the contract's JSON and drops it. Set
   * it where a peer you do not trust could make a client hold too much.
   * @default no limit (the protocol's largest packet)
   */
  maxIncomingPacketBytes?: number;
  /**
   * Shapes each TCP, TLS or WebSocket connection as the station's link says (link-shaping.ts). A
   * broker in this process is shaped by the acceptor it is given instead.
   * @default none: the network as it is
   */
  shaper?: LinkShaper;
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

/** A packet id in flight: a QoS 1 publication waits for its PUBACK, a subscription for its SUBACK. */
interface Waiting {
  ack: 'puback' | 'suback';
  done: Done;
  /** A publication's PUBLISH as sent (topic, payload, retain, packet id), kept in a persistent session to send it again (MQTT 3.1.1, 4.4). */
  packet?: Buffer;
}

/** A publication waiting to be sent: encoded already (a QoS 1 one gets its packet id when it goes out). */
interface Queued {
  packet: Buffer;
  qos: 0 | 1;
  done: Done;
}

export class LeanMqttClient extends EventEmitter implements MqttSession, LinkOwner {
  readonly options: { reconnectPeriod: number };
  readonly #settings: Required<Omit<LeanClientOptions, 'will' | 'reconnectPeriod' | 'reconnectDelay' | 'clock' | 'username' | 'password' | 'shaper'>> &
    Pick<LeanClientOptions, 'will' | 'username' | 'password'>;
  readonly #clock: Clock;
  readonly #reconnectDelay: (attempt: number) => number;
  /** Reconnects since the last accepted CONNACK, counting the one being scheduled. */
  #reconnectAttempt = 0;
  readonly #target: LeanTarget;
  readonly #shaper: LinkShaper | undefined;
  #link: Link | undefined;
  #connected = false;
  /** end() was called: no reconnect, and the next close is final. */
  #ending = false;
  #nextId = 0;
  /** QoS 1 publications and subscriptions waiting for their PUBACK / SUBACK, by packet id, in the order sent. */
  readonly #inflight = new Map<number, Waiting>();
  /** How many of `#inflight` are publications (capped by `maxInflight`). */
  #publishesInFlight = 0;
  /** Publications waiting to be sent, in the order published (bounded by `maxQueued`). */
  #queue: Queued[] = [];
  #keepaliveTimer: TimerHandle | undefined;
  #sentSinceTick = false;
  #receivedSinceTick = false;
  /** Keepalive checks since a PINGREQ went out with nothing come back (0: none waiting). */
  #unansweredChecks = 0;
  #connectTimer: TimerHandle | undefined;
  #reconnectTimer: TimerHandle | undefined;

  /** `target` may also be a broker in this process as such (`aedes.handle`, a broker thread). */
  constructor(target: LeanTarget | StreamAcceptor, options: LeanClientOptions) {
    super();
    this.#target = 'kind' in target ? target : { kind: 'memory', broker: target };
    this.#shaper = options.shaper;
    this.options = { reconnectPeriod: options.reconnectPeriod ?? 1000 };
    this.#clock = options.clock ?? systemClock;
    this.#reconnectDelay = options.reconnectDelay ?? (() => this.options.reconnectPeriod);
    const maxIncomingPacketBytes = options.maxIncomingPacketBytes ?? DEFAULT_MAX_INCOMING_PACKET_BYTES;
    if (!Number.isInteger(maxIncomingPacketBytes) || maxIncomingPacketBytes < 1) {
      throw new RangeError(`maxIncomingPacketBytes must be a whole number of bytes above 0, not ${maxIncomingPacketBytes}`);
    }
    const maxInflight = wholeNumber('maxInflight', options.maxInflight ?? 100, 1, MAX_PACKET_ID);
    const maxQueued = wholeNumber('maxQueued', options.maxQueued ?? 1000, 0, Number.MAX_SAFE_INTEGER);
    const writeHighWaterBytes = wholeNumber('writeHighWaterBytes', options.writeHighWaterBytes ?? 1024 * 1024, 16 * 1024, Number.MAX_SAFE_INTEGER);
    this.#settings = {
      clientId: options.clientId,
      clean: options.clean ?? true,
      maxInflight,
      maxQueued,
      writeHighWaterBytes,
      keepalive: options.keepalive ?? 60,
      connectTimeout: options.connectTimeout ?? 30_000,
      will: options.will,
      username: options.username,
      password: options.password,
      maxIncomingPacketBytes,
    };
    this.#open();
  }

  get connected(): boolean {
    return this.#connected;
  }

  /** The limit a link's reader applies to what the broker sends. @internal */
  get maxIncomingPacketBytes(): number {
    return this.#settings.maxIncomingPacketBytes;
  }

  /** What waits: QoS 1 publications sent and not acknowledged, publications queued unsent, bytes the link has not written yet. */
  get flow(): { inFlight: number; queued: number; unsentBytes: number } {
    return { inFlight: this.#publishesInFlight, queued: this.#queue.length, unsentBytes: this.#link?.backlog() ?? 0 };
  }

  /**
   * Publishes at QoS 0 (the callback once written) or QoS 1 (the callback once the PUBACK is in).
   * QoS 2 is refused with a throw. While `maxInflight` QoS 1 publications wait for their PUBACK, or
   * the link is over `writeHighWaterBytes`, the publication waits in the queue; with the queue full
   * it fails at once: through the callback, or as 'error' without one.
   */
  publish(topic: string, message: string | Buffer, opts: { qos: 0 | 1; retain?: boolean }, callback?: Done): this {
    const qos = opts.qos;
    if (qos !== 0 && qos !== 1) throw new RangeError(`QoS ${String(qos)} is not supported: this MQTT client publishes at QoS 0 and 1 only`);
    if (!this.#connected) {
      callback?.(new Error('client disconnected'));
      return this;
    }
    const retain = opts.retain === true;
    if (this.#queue.length === 0 && this.#canSend(qos)) {
      if (qos === 0) {
        this.#send(encodePublish(topic, message, 0, retain, 0));
        callback?.();
        return this;
      }
      const done = callback ?? noop;
      const id = this.#freeId(done);
      if (id === undefined) return this;
      // What cannot be encoded throws before anything is kept or sent: the caller hears of it once.
      const packet = encodePublish(topic, message, 1, retain, id);
      // Kept for a resend only in a persistent session: a clean one never sends it again, and a
      // buffer that dies young costs the garbage collector less (about a third of this path's time).
      this.#inflight.set(id, { ack: 'puback', done, packet: this.#settings.clean ? undefined : packet });
      this.#publishesInFlight += 1;
      this.#send(packet);
      return this;
    }
    // Encoded now, so what cannot be encoded throws to the caller, as above.
    const packet = encodePublish(topic, message, qos, retain, 0);
    if (this.#queue.length >= this.#settings.maxQueued) {
      const error = new Error(
        `publish queue full: ${this.#queue.length} publications wait to be sent (maxQueued) behind ${this.#publishesInFlight} unacknowledged (maxInflight ${this.#settings.maxInflight})`,
      );
      if (callback) callback(error);
      else this.#emitError(error);
      return this;
    }
    this.#queue.push({ packet, qos, done: callback ?? noop });
    return this;
  }

  /** Whether a publication at `qos` may be written now: the link is under its high-water mark, and a QoS 1 one is under `maxInflight`. */
  #canSend(qos: 0 | 1): boolean {
    const link = this.#link;
    if (!link || link.backlog() > this.#settings.writeHighWaterBytes) return false;
    return qos === 0 || this.#publishesInFlight < this.#settings.maxInflight;
  }

  /** Sends queued publications, in order, while they may go (MQTT 3.1.1, 4.6: order kept, QoS 0 waits behind QoS 1). */
  #drainQueue(): void {
    while (this.#connected && this.#queue.length > 0) {
      const next = this.#queue[0]!;
      if (!this.#canSend(next.qos)) return;
      this.#queue.shift();
      if (next.qos === 0) {
        this.#send(next.packet);
        callSafely(() => next.done());
        continue;
      }
      const id = this.#freeId(next.done);
      if (id === undefined) continue;
      setPublishId(next.packet, id);
      this.#inflight.set(id, { ack: 'puback', done: next.done, packet: this.#settings.clean ? undefined : next.packet });
      this.#publishesInFlight += 1;
      this.#send(next.packet);
    }
  }

  /** The socket under the link wrote out what it held; called by the link only. @internal */
  onLinkDrain(link: Link): void {
    if (link === this.#link) this.#drainQueue();
  }

  /** UNSUBSCRIBE (MQTT 3.1.1, 3.10) is not supported: refused with a throw rather than ignored. */
  unsubscribe(topic: string | string[]): never {
    throw new Error(`UNSUBSCRIBE is not supported by this MQTT client (asked for ${String(topic)}): end the session instead`);
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
      const unsupported = list.find(({ qos }) => qos !== 0 && qos !== 1);
      if (unsupported) throw new RangeError(`QoS ${String(unsupported.qos)} is not supported: this MQTT client subscribes at QoS 0 and 1 only (${unsupported.topic})`);
      if (!this.#connected) {
        reject(new Error('client disconnected'));
        return;
      }
      const messageId = this.#allocateId('suback', (error, packet) => {
        if (error) reject(error);
        else resolve(list.map(({ topic }, index) => ({ topic, qos: packet?.cmd === 'suback' ? (packet.granted[index] ?? 128) : 128 })));
      });
      if (messageId === undefined) return;
      this.#send(mqttPacket.generate({ cmd: 'subscribe', messageId, subscriptions: list }));
    });
  }

  /** Closes the session: with `force`, by dropping the stream (the broker fires the last will); otherwise with DISCONNECT. */
  end(force = false, callback?: () => void): this {
    this.#ending = true;
    this.#clearTimer(this.#reconnectTimer);
    const link = this.#link;
    if (!link) {
      // Between connections of a persistent session: what was kept for the next one fails now.
      this.#failKept(new Error('connection closed'));
      if (callback) queueMicrotask(callback);
      return this;
    }
    if (callback) this.once('close', callback);
    const wasConnected = this.#connected;
    // Nothing goes out after DISCONNECT [MQTT-3.14.4-2]: no publication, PUBACK or PINGREQ.
    this.#connected = false;
    this.#clearTimer(this.#keepaliveTimer);
    if (!force && wasConnected) {
      link.push(DISCONNECT);
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
    // Encoded before the connection opens: a CONNECT that cannot be encoded (a password without a
    // user name) fails the constructor with nothing left behind. It is not kept between
    // connections: a small Buffer held per client would pin a slab of the buffer pool each. And
    // a will given as a function is asked again here, for this connection.
    const { will } = this.#settings;
    const connect = encodeConnect({ ...this.#settings, will: typeof will === 'function' ? will() : will });
    const link = this.#connectLink();
    this.#link = link;
    this.#connectTimer = keepProcessAlive(
      this.#clock.setTimeout(() => {
        this.#emitError(new Error('connack timeout'));
        link.destroy();
      }, this.#settings.connectTimeout),
    );
    link.push(connect);
  }

  #connectLink(): Link {
    const target = this.#target;
    if (this.#shaper && target.kind !== 'memory') return this.#shaper.shape(this, (owner) => openLink(owner, target));
    return openLink(this, target);
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

  /**
   * A packet id for `done`, to be completed by an `ack`, or (with every id in flight) `undefined`
   * after failing `done` at once. Packet ids are 1..65535, shared by publications and
   * subscriptions, and must not be reused while in flight (MQTT 3.1.1, section 2.3.1).
   */
  #allocateId(ack: Waiting['ack'], done: Done): number | undefined {
    const id = this.#freeId(done);
    // One shape for every entry: the PUBACK path stays monomorphic.
    if (id !== undefined) this.#inflight.set(id, { ack, done, packet: undefined });
    return id;
  }

  /** The next packet id not in flight, not yet taken; `undefined` after failing `done` when none is free. */
  #freeId(done: Done): number | undefined {
    if (this.#inflight.size >= MAX_PACKET_ID) {
      done(new Error(`${MAX_PACKET_ID} QoS 1 packets are waiting for the broker's answer: no packet id is free`));
      return undefined;
    }
    do this.#nextId = this.#nextId === MAX_PACKET_ID ? 1 : this.#nextId + 1;
    while (this.#inflight.has(this.#nextId));
    return this.#nextId;
  }

  /** A packet from the broker; called by the link's reader only. @internal */
  onPacket(packet: IncomingPacket): void {
    this.#unansweredChecks = 0;
    this.#receivedSinceTick = true;
    switch (packet.cmd) {
      case 'publish': {
        if (packet.qos === 2) {
          // A broker sends at most the QoS it granted (MQTT 3.1.1, 3.8.4), and this client never asks
          // for 2: a QoS 2 PUBLISH breaks the protocol, and ignoring it would leave the broker
          // waiting for a PUBREC forever. The connection is closed (section 4.8).
          this.#link?.destroy(new Error(`the broker sent a QoS 2 PUBLISH on ${packet.topic}, which this client never subscribes to`));
          return;
        }
        try {
          this.emit('message', packet.topic, packet.payload, packet);
        } finally {
          // Acknowledged even when a listener throws: the message was delivered, the listener failed.
          if (packet.qos === 1 && this.#connected) this.#send(encodePuback(packet.messageId!));
        }
        return;
      }
      case 'puback':
      case 'suback': {
        // An ack for an id not in flight (a duplicate, say) changes nothing and is ignored.
        const waiting = this.#inflight.get(packet.messageId);
        if (!waiting) return;
        if (waiting.ack !== packet.cmd) {
          // The wrong kind of ack for an id in flight breaks the protocol: the connection is
          // closed (MQTT 3.1.1, section 4.8), and what was in flight fails as on any close, rather
          // than a subscription reading a PUBACK as refused or a publication passing for delivered.
          const [sent, expected] = [packet.cmd.toUpperCase(), waiting.ack.toUpperCase()];
          this.#link?.destroy(new Error(`the broker sent a ${sent} for packet id ${packet.messageId}, which is waiting for a ${expected}`));
          return;
        }
        this.#inflight.delete(packet.messageId);
        if (waiting.ack === 'puback') this.#publishesInFlight -= 1;
        waiting.done(undefined, packet);
        this.#drainQueue();
        return;
      }
      case 'connack': {
        if (this.#connected) {
          // A second CONNACK on one connection breaks the protocol (MQTT 3.1.1, section 3.2).
          this.#link?.destroy(new Error('the broker sent a second CONNACK'));
          return;
        }
        this.#clearTimer(this.#connectTimer);
        // Not kept: an idle station would hold the spent timer (120 bytes) for its whole life.
        this.#connectTimer = undefined;
        if (packet.returnCode !== 0) {
          this.#emitError(new ConnackError(packet.returnCode));
          this.#link?.destroy();
          return;
        }
        if (packet.sessionPresent && this.#settings.clean) {
          // A broker must answer a clean session with session present 0 [MQTT-3.2.2-1]; one that
          // claims to have kept state it was told to discard is not trusted with this session.
          this.#link?.destroy(new Error('the broker answered a clean session with session present 1'));
          return;
        }
        this.#connected = true;
        this.#reconnectAttempt = 0;
        this.#scheduleKeepalive();
        // A persistent session: what was sent and not acknowledged goes again first, in the order
        // first sent, with DUP and the same packet id [MQTT-4.4.0-1, MQTT-3.3.1-1], whether or not
        // the broker kept the session. Then what waited in the queue, then whatever the
        // 'connect' listeners publish.
        for (const waiting of this.#inflight.values()) {
          if (!waiting.packet) continue;
          if ((waiting.packet[0]! & 0x08) === 0) waiting.packet = withDup(waiting.packet);
          this.#send(waiting.packet);
        }
        this.#drainQueue();
        this.emit('connect', packet);
        return;
      }
      default:
        return; // PINGRESP
    }
  }

  /** The connection to the broker closed, whoever closed it; called by the link only. @internal */
  onLinkClosed(link: Link): void {
    if (link !== this.#link) return;
    this.#link = undefined;
    this.#connected = false;
    this.#unansweredChecks = 0;
    this.#clearTimer(this.#connectTimer);
    this.#clearTimer(this.#keepaliveTimer);
    // A clean session is discarded with its connection (MQTT 3.1.1, 3.1.2.4): what was in flight or
    // queued fails. A persistent one that will reconnect keeps its unacknowledged publications to
    // send again with DUP, and its queue; a subscription in flight fails either way (4.4 resends
    // only PUBLISH and PUBREL), and so does everything when no reconnect will come.
    const resume = !this.#settings.clean && !this.#ending && this.options.reconnectPeriod > 0;
    const failed: Done[] = [];
    for (const [id, waiting] of this.#inflight) {
      if (resume && waiting.packet) continue;
      this.#inflight.delete(id);
      if (waiting.ack === 'puback') this.#publishesInFlight -= 1;
      failed.push(waiting.done);
    }
    if (!resume) {
      for (const { done } of this.#queue) failed.push(done);
      this.#queue = [];
    }
    const closed = new Error('connection closed');
    for (const done of failed) callSafely(() => done(closed));
    this.emit('close');
    this.#reconnectLater();
  }

  /** Fails the publications kept for a reconnect that will not come: in flight and queued. */
  #failKept(error: Error): void {
    const failed = [...this.#inflight.values(), ...this.#queue].map(({ done }) => done);
    this.#inflight.clear();
    this.#publishesInFlight = 0;
    this.#queue = [];
    for (const done of failed) callSafely(() => done(error));
  }

  #reconnectLater(): void {
    if (this.#ending || this.options.reconnectPeriod <= 0) return;
    this.#reconnectAttempt += 1;
    const delay = this.#reconnectDelay(this.#reconnectAttempt);
    this.#reconnectTimer = keepProcessAlive(
      this.#clock.setTimeout(() => {
        if (this.#ending) return;
        try {
          this.#open();
        } catch (error) {
          // The CONNECT could not be built (a will function that threw): no connection was opened.
          this.#emitError(error as Error);
          this.#reconnectLater();
        }
      }, delay),
    );
  }

  #clearTimer(handle: TimerHandle | undefined): void {
    if (handle !== undefined) this.#clock.clearTimeout(handle);
  }

  /** @internal */
  onLinkError(error: Error): void {
    this.#emitError(error);
  }

  /**
   * Checked every half keepalive period, without touching a timer on every packet: a PINGREQ goes
   * out when nothing was sent since the last check (so the broker hears from the client within
   * 1.5× keepalive), or when nothing was received (so a client that keeps sending into a dead
   * connection finds out). The PINGREQ counts as sent, so an idle client pings once a period. Over
   * TCP, a PINGREQ that nothing answered for a whole keepalive period (two checks) means the
   * connection is dead without having closed (a broker or a network that went away): it is
   * dropped, and the client reconnects. In memory a connection cannot die silently, and a busy
   * thread must not look dead, unless it goes through a shaped link (link-shaping.ts), which can.
   */
  #scheduleKeepalive(): void {
    const seconds = this.#settings.keepalive;
    if (seconds <= 0) return;
    // The system clock's timers are unref'd: keepalive alone does not keep a process alive.
    this.#keepaliveTimer = this.#clock.setTimeout(() => {
      if (!this.#connected) return;
      const sent = this.#sentSinceTick;
      const received = this.#receivedSinceTick;
      this.#sentSinceTick = false;
      this.#receivedSinceTick = false;
      if (this.#unansweredChecks > 0 && (this.#target.kind !== 'memory' || this.#target.broker.canGoSilent === true)) {
        this.#unansweredChecks += 1;
        if (this.#unansweredChecks > 2) {
          this.#emitError(new Error('no PINGRESP within the keepalive period'));
          this.#link?.destroy();
          return;
        }
      } else if (!sent || !received) {
        this.#send(PINGREQ);
        this.#unansweredChecks = 1;
      }
      this.#scheduleKeepalive();
    }, (seconds * 1000) / 2);
  }
}

/** The CONNECT packet of these settings (mqtt-packet throws for one MQTT forbids, such as a password without a user name). */
function encodeConnect(
  settings: Pick<LeanClientOptions, 'clientId' | 'username' | 'password'> & { will: LastWill | undefined; clean: boolean; keepalive: number },
): Buffer {
  const { clientId, clean, keepalive, will, username, password } = settings;
  const connect: Packet = { cmd: 'connect', protocolId: 'MQTT', protocolVersion: 4, clean, clientId, keepalive };
  if (will && will.qos !== 0 && will.qos !== 1) throw new RangeError(`a last will at QoS ${String(will.qos)} is not supported: QoS 0 and 1 only`);
  if (will) connect.will = will;
  if (username !== undefined) connect.username = username;
  if (password !== undefined) connect.password = Buffer.from(password);
  return mqttPacket.generate(connect);
}

const MAX_PACKET_ID = 65535;
/** The largest packet MQTT 3.1.1 can frame: 268,435,455 bytes of remaining length and a 5-byte fixed header. */
const DEFAULT_MAX_INCOMING_PACKET_BYTES = 268_435_455 + 5;
const PINGREQ = Buffer.from([0xc0, 0]);
const DISCONNECT = Buffer.from([0xe0, 0]);

function noop(): void {}

/** `value` if it is a whole number from `min` to `max`; a RangeError naming the option otherwise. */
function wholeNumber(name: string, value: number, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max) throw new RangeError(`${name} must be a whole number from ${min} to ${max}, not ${value}`);
  return value;
}

/**
 * The system clock unrefs its timers; the CONNACK deadline and a pending reconnect keep the process
 * alive, as the socket they stand for would (a fleet waiting to reconnect to its broker must not
 * exit). Another clock's handle is left as it is.
 */
function keepProcessAlive(handle: TimerHandle): TimerHandle {
  if ('ref' in handle) handle.ref();
  return handle;
}
