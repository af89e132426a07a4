/**
 * The firmware's MQTT binding: one station = one MQTT session with its own client id, last will and
 * retained state (docs/design.md rule 2). It subscribes to its unlock topics, feeds commands to the pure
 * `StationModel` and publishes what the model reports, following the topic contract in src/contract/topics.ts.
 */
import { StationModel, type LockPhase, type StationOutput, type StationSnapshot } from '../station/station-model.js';
import { systemClock, type Clock, type TimerHandle } from '../shared/clock.js';
import { unseededRandom, type Random } from '../station/random.js';
import type { StationConfig } from '../fixture/fixture-schema.js';
import type { LinkControl } from './link-shaping.js';
import { describeLink } from '../fixture/link-schema.js';
import { CONTRACT_QOS, StationTopics, encodePayload, parsePayload } from '../contract/topics.js';
import { type UnlockCommand } from '../contract/payloads.js';
import { CONNECT_TIMEOUT_MS, brokerLabel, connectError, createSession, firstConnect, type ClientCertSource, type MqttTransport } from './transport.js';
import type { ConnectIdentity } from './identity.js';
import type { DeliveryInfo, LeanClientOptions, MqttSession, PublishProperties } from './lean-client/index.js';
import type { Mqtt5Settings } from '../fixture/mqtt-schema.js';
import { ReconnectBackoff, type FleetReconnect, type RecoveringStation } from './reconnect-policy.js';
import { ReconnectTimers } from './reconnect-timers.js';
import { PLAUSIBILITY_LIMITS } from './plausibility.js';
import { SessionWatch, type StationLinkEvent } from './session-watch.js';
import { STOP_LINGER_MS } from './end-within.js';

/** How long `stop()` waits on the broker for each of two things (src/mqtt/end-within.ts). */
export { STOP_LINGER_MS } from './end-within.js';

/** A station's MQTT keepalive in seconds unless told otherwise (the AsyncAPI document states it too). */
export const STATION_KEEPALIVE_SECONDS = 30;

export interface StationClientOptions {
  config: StationConfig;
  transport: MqttTransport;
  /** The station's shaped link (link-shaping.ts), when its fixture gives it one; a `memory` transport already goes through it. */
  link?: LinkControl;
  /**
   * Who the station is on the broker: client id, user name, password and client certificate
   * (identity.ts). Credentials in the broker URL apply when it has no password of its own.
   * @default client id `station-sim-{token}`, nothing else
   */
  identity?: ConnectIdentity;
  clock: Clock;
  /** The station model's stream: unlock delays, faults. Never drawn from for reconnects. */
  random: Random;
  /**
   * The reconnect backoff's jitter, a stream of its own so that a reconnect does not shift the
   * model's next unlock delay (`reconnectRandom(seed, stationId)` for a seeded run).
   * @default an unseeded stream
   */
  reconnectRandom?: Random;
  /**
   * MQTT keepalive in seconds, over the fixture's `behaviour.keepaliveSeconds`. The broker fires
   * the last will when it hears nothing for 1.5× this.
   * @default the station's `behaviour.keepaliveSeconds`
   */
  keepaliveSeconds?: number;
  /**
   * First reconnect delay; it doubles on each failed attempt up to `maxReconnectMs`, with jitter.
   * @default 500
   */
  reconnectMs?: number;
  /** @default 15000 */
  maxReconnectMs?: number;
  /** Every heartbeat interval is multiplied by this (src/fleet/heartbeat-budget.ts). @default 1 */
  heartbeatScale?: number;
  /**
   * The stations of this process that reconnect to the same broker: once the broker accepts one of
   * them after an outage, the others reconnect within its recovery window instead of sleeping out
   * their backoff (reconnect-policy.ts).
   * @default none: each station waits out its own backoff
   */
  fleetReconnect?: FleetReconnect;
  /**
   * Called when a fault fires, for the event stream. The callbacks are told the station's config,
   * so one function can serve a whole fleet (a closure per station and callback would cost memory).
   */
  onFaultApplied?: (event: Parameters<NonNullable<StationOutput['faultApplied']>>[0], station: StationConfig) => void;
  /**
   * Called with every command that reaches the station's unlock topics, before the station reads
   * it, whatever it is (retained, QoS 0, malformed): for the judge (src/judge/service-judge.ts).
   * @default ignored
   */
  onCommand?: (command: CommandDelivery, station: StationConfig) => void;
  /**
   * Called when the station's model goes online (its session subscribed, its state published) or
   * offline (the session closed, or the station went off or stopped), once per change.
   * @default ignored
   */
  onOnlineChange?: (online: boolean, station: StationConfig) => void;
  /** Called when a lock's phase changes (and on every accepted unlock), for the event stream. */
  onLockPhase?: (event: LockPhase, station: StationConfig) => void;
  /** Whether anybody reads lock phases now (the fleet agent knows). @default always, when `onLockPhase` is given */
  wantsLockPhases?: () => boolean;
  /**
   * Real time in milliseconds, for how long a connection lasted (see `StationLinkEvent`). Not the
   * simulated clock: the broker closes connections on real time, whatever a manual clock says.
   * @default `linkClock.now`, or Date.now
   */
  wallClock?: () => number;
  /**
   * The timers of the MQTT session: its keepalive, the CONNACK deadline and the reconnect delays.
   * Real time, not the simulated `clock`: the broker keeps its side of the session on real time.
   * Tests pass a `ManualClock` to run keepalive and backoff in fake time.
   * @default systemClock
   */
  linkClock?: Clock;
  /**
   * The fixture's `mqtt.mqtt5` section, for a station on an MQTT 5 transport: the Session Expiry
   * Interval of a persistent session (mqtt5-session.ts). Ignored at 3.1.1.
   * @default the defaults of `Mqtt5Settings`
   */
  mqtt5?: Mqtt5Settings;
}

/** A command as it reached the station (`onCommand`): what MQTT said of it, and what the station knew. */
export interface CommandDelivery {
  /** The lock its topic names. */
  lockId: string;
  /** The delivery's QoS: a command published at QoS 0 reaches the QoS 1 subscription at 0. */
  qos: 0 | 1;
  /** Set when the broker sent it as a retained message, on subscription. */
  retain: boolean;
  payload: Buffer;
  /** The payload read as a command, once, for the station and the judge; undefined when it is not one (or too large to read). */
  command: UnlockCommand | undefined;
  /** Whether the station's model was online when it arrived. */
  online: boolean;
  /** When the station's current session went online (the CONNECT of its online status); undefined before. */
  onlineSince: number | undefined;
  /** Over MQTT 5, the PUBLISH properties it came with (expiry left, user properties, response topic, correlation data); undefined at 3.1.1. */
  properties: PublishProperties | undefined;
}

/** Request/response replies waiting for their ack, at most (a dropped command leaves its entry). */
const MAX_PENDING_REPLIES = 64;

export { TAKEN_OVER_AFTER, type StationLinkEvent } from './session-watch.js';

/**
 * A delivery on an unlock topic read as a command, or undefined when it is not one. A command is
 * about 100 bytes; a larger payload is not read at all (src/mqtt/plausibility.ts), and an empty one
 * is how MQTT clears a retained message.
 */
export function readUnlockCommand(payload: Buffer): UnlockCommand | undefined {
  return payload.length === 0 || payload.length > PLAUSIBILITY_LIMITS.maxPayloadBytes ? undefined : parsePayload('unlock', payload);
}

/** A connection `goOnline` waits for, and the ways it ends: each settles `done` at most once. */
interface PendingConnection {
  done: Promise<void>;
  /** The station ended the connection (offline, stop, kill) before it was up. */
  abandon: (reason: string) => void;
  /** Subscribed, with the state the broker holds. */
  ready: () => void;
  /** The connection failed before the station was ever up; ignored after that (the client reconnects). */
  fail: (error: Error) => void;
}

/** What a connection or reset of a stopped station rejects with: the same words `stop()` gives the one in flight. */
function stoppedError(): Error {
  return new Error('the station stopped before it was connected');
}

/** The longest reconnect delay of a station unless told otherwise (`maxReconnectMs`). */
export const DEFAULT_MAX_RECONNECT_MS = 15_000;

/** A station that is connected (or deliberately offline) and can be stopped. */
export class StationClient implements RecoveringStation {
  readonly model: StationModel;
  /** The station's shaped link, when its fixture gives it one. */
  readonly link: LinkControl | undefined;
  readonly topics: StationTopics;
  readonly #options: StationClientOptions;
  #client: MqttSession | undefined;
  #everConnected = false;
  /** While set, publications are collected so `start()` can wait for their PUBACKs. */
  #collecting: Promise<void>[] | undefined;
  #rebootTimer: TimerHandle | undefined;
  /** While `goOnline` waits for its connection: what it returns, and how to give up on it. */
  #connecting: PendingConnection | undefined;
  /** The last reset asked for; the next one starts when it has settled (see `reset`). */
  #resetting: Promise<void> = Promise.resolve();
  readonly #sessions: SessionWatch;
  readonly #maxReconnectMs: number;
  /** The reconnect jitter, apart from the model's stream (see `reconnectRandom`). */
  readonly #reconnectRandom: Random;
  /** When the current session published `online` (see `CommandDelivery.onlineSince`). */
  #onlineSince: number | undefined;
  /** Set by `stop()`: a stopped station never connects again (a reset queued behind another must not bring it back). */
  #stopped = false;
  /** The timers of the current connection, whose pending reconnect `reconnectWithin` brings forward. */
  #timers: ReconnectTimers | undefined;
  /**
   * MQTT 5 request/response (MQTT 5.0, section 4.10): where the ack of a command that named a
   * Response Topic goes, with its Correlation Data, by command id. Made only when such a command comes.
   */
  #replies: Map<string, { responseTopic: string; correlationData?: Buffer }> | undefined;

  constructor(options: StationClientOptions) {
    this.#options = options;
    this.link = options.link;
    const { config } = options;
    this.#maxReconnectMs = options.maxReconnectMs ?? DEFAULT_MAX_RECONNECT_MS;
    options.fleetReconnect?.join(this);
    this.#reconnectRandom = options.reconnectRandom ?? unseededRandom();
    this.#sessions = new SessionWatch({
      token: config.token,
      clientId: this.#identity().clientId,
      maxReconnectMs: this.#maxReconnectMs,
      wallClock: options.wallClock ?? (options.linkClock ? () => options.linkClock!.now() : Date.now),
    });
    this.topics = new StationTopics(config.behaviour.topics);
    const token = config.token;
    const publish = (topic: string, payload: string, retain: boolean): void => {
      const client = this.#client;
      if (!client) return;
      const collecting = this.#collecting;
      if (!collecting) {
        client.publish(topic, payload, { qos: CONTRACT_QOS, retain });
        return;
      }
      collecting.push(
        new Promise((resolve) => {
          // A failed publication is not retried: after a reconnect the station publishes its whole state again, so readiness need not wait for it.
          client.publish(topic, payload, { qos: CONTRACT_QOS, retain }, () => resolve());
        }),
      );
    };
    this.model = new StationModel({
      config,
      clock: options.clock,
      random: options.random,
      ...(options.heartbeatScale === undefined ? {} : { heartbeatScale: options.heartbeatScale }),
      output: {
        status: (payload) => publish(this.topics.topic('status', { token }), encodePayload('status', payload), true),
        lockState: (payload) =>
          publish(this.topics.topic('lockState', { token, lockId: payload.lockId }), encodePayload('lockState', payload), true),
        ack: (payload) => {
          const reply = this.#replies?.get(payload.commandId);
          if (reply === undefined) publish(this.topics.topic('acks', { token }), encodePayload('acks', payload), false);
          else this.#reply(payload.commandId, reply, encodePayload('acks', payload));
        },
        faultApplied: (event) => options.onFaultApplied?.(event, config),
        ...(options.onLockPhase ? { lockPhase: (event: LockPhase) => options.onLockPhase!(event, config) } : {}),
        ...(options.wantsLockPhases ? { wantsLockPhases: options.wantsLockPhases } : {}),
      },
    });
  }

  get token(): string {
    return this.#options.config.token;
  }

  /**
   * Answers a command that named a Response Topic there, with its Correlation Data (MQTT 5.0, 4.10.1:
   * the responder sends the Correlation Data back unchanged). The broker's ACL still decides whether
   * the station may publish there; the gateway names the station's own acks topic.
   */
  #reply(commandId: string, reply: { responseTopic: string; correlationData?: Buffer }, payload: string): void {
    this.#replies!.delete(commandId);
    const properties: PublishProperties = reply.correlationData === undefined ? {} : { correlationData: reply.correlationData };
    this.#client?.publish(reply.responseTopic, payload, { qos: CONTRACT_QOS, retain: false, properties });
  }

  /** The station's settings, as the fixture resolved them. */
  get config(): StationConfig {
    return this.#options.config;
  }

  /** True while the MQTT session is up. */
  /** The station's state for the control plane: the model's, and the link when it has one. */
  snapshot(): StationSnapshot {
    const snapshot = this.model.snapshot();
    return this.link ? { ...snapshot, link: describeLink(this.link.conditions) } : snapshot;
  }

  get connected(): boolean {
    return this.#client?.connected === true && this.model.status === 'online';
  }

  /** True between a `StationLinkEvent` `up` and the next `down`. */
  get sessionUp(): boolean {
    return this.#sessions.sessionUp;
  }

  /** Why the broker refused the station's last reconnect (bad credentials, a revoked certificate…); undefined once it is accepted. */
  get refusal(): string | undefined {
    return this.#sessions.refusal;
  }

  /**
   * Tells `listener` what happens to the station's MQTT session from now on; a station already
   * found taken over says so at once. Returns a function that removes the listener.
   */
  onLinkEvent(listener: (event: StationLinkEvent) => void): () => void {
    return this.#sessions.onLinkEvent(listener);
  }

  /**
   * Connects, subscribes and publishes the station's retained state. Resolves once the
   * subscription is acknowledged; rejects on the first connection failure (nothing is retried
   * before the station has been up once, so a wrong broker address fails fast).
   */
  async start(): Promise<void> {
    if (this.#options.config.initialStatus === 'offline') {
      await this.#publishOfflineRecord();
      return;
    }
    await this.goOnline();
  }

  /**
   * Opens the MQTT session (again). Resolves once subscribed with the state published; a call
   * while connecting waits for the same connection. Rejects if `goOffline`, `stop` or `kill` ends
   * the connection before it is up, or (before the station has ever been up) if it fails.
   */
  goOnline(): Promise<void> {
    if (this.#stopped) return Promise.reject(stoppedError());
    if (this.#client) return this.#connecting?.done ?? Promise.resolve();
    const backoff = new ReconnectBackoff({ firstMs: this.#options.reconnectMs ?? 500, maxMs: this.#maxReconnectMs, random: this.#reconnectRandom });
    const watch = this.#sessions.connection();
    /** When the latest CONNECT of this connection went out: the session's lastConnection. */
    let connectSentAt = this.#options.clock.now();
    const timers = new ReconnectTimers(this.#options.linkClock ?? systemClock);
    this.#timers = timers;
    const client = createSession(this.#options.transport, this.#sessionOptions(backoff, timers, (at) => (connectSentAt = at)));
    this.#client = client;
    const fleet = this.#options.fleetReconnect;
    let accepted = false;
    const pending = this.#awaitConnection(client);
    client.on('message', (topic, payload, packet) => this.#onMessage(topic, payload, packet));
    client.on('error', (error) => {
      watch.failed(error);
      pending.fail(error);
    });
    client.on('connect', (connack) => {
      accepted = true;
      watch.connected();
      fleet?.answered(this);
      this.#subscribeAndPublish(client, pending, () => connectSentAt, connack?.sessionPresent === true);
    });
    client.on('close', () => {
      // A connection that ended before its CONNACK: the broker is away, or refusing.
      if (!accepted) fleet?.failed();
      accepted = false;
      if (this.model.status === 'online') this.#disconnected();
      if (watch.closed(this.#client !== client, this.#everConnected)) backoff.reset();
      backoff.grow();
    });
    return pending.done;
  }

  /** The lean client's options for a connection; `onConnect` hears when each CONNECT goes out. */
  #sessionOptions(backoff: ReconnectBackoff, timers: ReconnectTimers, onConnect: (at: number) => void): LeanClientOptions & { clientCert?: ClientCertSource } {
    const token = this.token;
    return {
      ...this.#identity(),
      clean: this.#options.config.behaviour.session !== 'persistent',
      keepalive: this.#options.keepaliveSeconds ?? this.#options.config.behaviour.keepaliveSeconds,
      // 0 (no reconnects) stays 0; otherwise each reconnect waits what the backoff says after the close.
      reconnectPeriod: backoff.delayMs,
      reconnectDelay: () => {
        timers.markNext();
        return backoff.delayMs;
      },
      connectTimeout: CONNECT_TIMEOUT_MS,
      clock: timers,
      ...(this.#options.mqtt5?.sessionExpirySeconds === undefined ? {} : { sessionExpirySeconds: this.#options.mqtt5.sessionExpirySeconds }),
      // In memory the broker's acceptor is already the link's (start-fleet.ts); over the network the client shapes its own.
      ...(this.link && this.#options.transport.kind !== 'memory' ? { shaper: this.link } : {}),
      // Built afresh for every CONNECT, the first and each automatic reconnect, so a crash in a later
      // session does not publish the first session's lastConnection and battery. As on real
      // firmware, the will cannot change during a session (MQTT 3.1.1, section 3.1.2.5): its battery
      // is the battery at (re)connect. Its lastConnection is the time the CONNECT went out, which
      // the model takes as the session's time too, so the online status and the will agree.
      will: () => {
        const connectSentAt = this.#options.clock.now();
        onConnect(connectSentAt);
        return {
          topic: this.topics.topic('status', { token }),
          payload: Buffer.from(encodePayload('status', { ...this.model.statusPayload('offline'), lastConnection: new Date(connectSentAt).toISOString() })),
          qos: CONTRACT_QOS,
          retain: true,
        };
      },
    };
  }

  #onMessage(topic: string, payload: Buffer, packet: DeliveryInfo | undefined): void {
    const address = this.topics.match('unlock', topic);
    if (address?.lockId === undefined || address.token !== this.token) return;
    // Read once here, for the judge and for the station.
    const command = readUnlockCommand(payload);
    this.#options.onCommand?.({
      lockId: address.lockId,
      // The station subscribes at QoS 1, so a delivery is at 0 or 1 (MQTT 3.1.1, 3.8.4).
      qos: packet?.qos === 0 ? 0 : 1,
      retain: packet?.retain === true,
      payload,
      command,
      online: this.model.status === 'online',
      onlineSince: this.#onlineSince,
      // Always present (undefined at 3.1.1): one shape of object, and nothing spread per command.
      properties: packet?.properties,
    }, this.#options.config);
    // A command someone published with the retain flag comes again on every subscription: it is
    // not a new command, and firmware acts only on live ones (commands are never retained, docs/design.md).
    // A malformed command is dropped, as firmware would: it has nobody to answer.
    if (packet?.retain || !command) return;
    const responseTopic = packet?.properties?.responseTopic;
    if (responseTopic !== undefined) this.#expectReply(command.commandId, responseTopic, packet!.properties!.correlationData);
    this.model.handleUnlock(address.lockId, command.commandId, command.sentAt);
  }

  #expectReply(commandId: string, responseTopic: string, correlationData: Buffer | undefined): void {
    const replies = (this.#replies ??= new Map());
    if (replies.size >= MAX_PENDING_REPLIES) replies.delete(replies.keys().next().value);
    replies.set(commandId, correlationData === undefined ? { responseTopic } : { responseTopic, correlationData });
  }

  /**
   * What `goOnline` returns for `client`, and the ways to settle it: each settles it once, and only
   * while it is the station's connection in progress (`#connecting`).
   */
  #awaitConnection(client: MqttSession): PendingConnection {
    let resolve!: () => void;
    let reject!: (error: Error) => void;
    const done = new Promise<void>((onResolve, onReject) => {
      resolve = onResolve;
      reject = onReject;
    });
    /** True once: whoever settles `done` first. */
    const settle = (): boolean => {
      if (this.#connecting !== pending) return false;
      this.#connecting = undefined;
      return true;
    };
    const pending: PendingConnection = {
      done,
      // Whoever ends the connection has taken `#client` and ends it; this only answers the caller.
      abandon: (reason) => {
        if (!settle()) return;
        client.removeAllListeners('connect');
        reject(new Error(`${reason} before it was connected`));
      },
      ready: () => {
        if (settle()) resolve();
      },
      fail: (error) => {
        if (this.#everConnected) return; // after the first success, the client keeps reconnecting
        if (!settle()) return;
        client.removeAllListeners('connect');
        client.end(true);
        this.#client = undefined;
        reject(connectError(error, brokerLabel(this.#options.transport)));
      },
    };
    this.#connecting = pending;
    return pending;
  }

  /**
   * On every CONNACK: subscribes to the station's unlock topics, then publishes its state. The
   * first time, `goOnline` resolves once the broker holds that state.
   */
  #subscribeAndPublish(client: MqttSession, pending: PendingConnection, connectSentAt: () => number, sessionPresent: boolean): void {
    // A persistent session the broker kept still holds the subscription (MQTT 3.1.1, 3.2.2.2), and
    // the commands it queued follow the CONNACK at once: the station goes on without subscribing.
    const subscribe = (done: (error: Error | null) => void): unknown =>
      sessionPresent ? done(null) : client.subscribe(this.topics.filter('unlock', { token: this.token }), { qos: CONTRACT_QOS }, done);
    subscribe((error) => {
      if (error) {
        pending.fail(error);
        return;
      }
      // Ended meanwhile (offline, stopped): this connection is not the station's any more.
      if (this.#client !== client) return;
      this.#everConnected = true;
      // Ready means the broker holds the retained status and every lock state, not just that we sent them.
      const published: Promise<void>[] = [];
      this.#collecting = published;
      this.#onlineSince = connectSentAt();
      this.model.connected(this.#onlineSince);
      this.#collecting = undefined;
      this.#options.onOnlineChange?.(true, this.#options.config);
      // aedes answers a QoS 1 PUBLISH with its PUBACK first and routes and retains it on the
      // next turn of the event loop (lib/handlers/publish.js), so in the broker's own process
      // one more turn passes before the station calls itself ready.
      const inProcess = this.#options.transport.kind === 'memory';
      void Promise.all(published).then(() => (inProcess ? setImmediate(pending.ready) : pending.ready()));
    });
  }

  /**
   * A clean shutdown: publish `offline` (retained) so the fleet's state is right without waiting
   * for the broker to notice, then disconnect.
   */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#options.fleetReconnect?.leave(this);
    this.#cancelReboot();
    const client = this.#client;
    this.#client = undefined;
    this.#connecting?.abandon('the station stopped');
    this.model.stop();
    if (!client) return;
    let answered = true;
    if (client.connected) {
      answered = await this.#linger(
        new Promise<void>((resolve) => {
          // A connection lost meanwhile will not bring the PUBACK: the persistent session keeps
          // the publication for a reconnect that the end below cancels.
          client.once('close', () => resolve());
          client.publish(
            this.topics.topic('status', { token: this.token }),
            encodePayload('status', this.model.statusPayload('offline')),
            { qos: CONTRACT_QOS, retain: true },
            () => resolve(),
          );
        }),
      );
    }
    this.#disconnected();
    // A broker that did not acknowledge the `offline` in time will not close after a DISCONNECT either.
    if (!answered || !(await this.#linger(client.endAsync(!client.connected)))) await client.endAsync(true);
  }

  /**
   * The broker is back (another station of the fleet was accepted): a reconnect due later than a
   * draw from `windowMs` happens at that draw instead (reconnect-policy.ts, `FleetReconnect`).
   */
  reconnectWithin(windowMs: number): void {
    const timers = this.#timers;
    if (!timers || timers.reconnectInMs === undefined) return;
    timers.reconnectWithin(this.#reconnectRandom.int(0, Math.round(windowMs)));
  }

  /** Waits for `work` at most `STOP_LINGER_MS` on the link's clock; false when that ran out first. */
  #linger(work: Promise<void>): Promise<boolean> {
    const clock = this.#options.linkClock ?? systemClock;
    return new Promise((resolve) => {
      const timer = clock.setTimeout(() => resolve(false), STOP_LINGER_MS);
      void work.then(() => {
        clock.clearTimeout(timer);
        resolve(true);
      });
    });
  }

  /** The model goes offline; the fleet hears of it once per change (`onOnlineChange`). */
  #disconnected(): void {
    const wasOnline = this.model.status === 'online';
    this.model.disconnected();
    if (wasOnline) this.#options.onOnlineChange?.(false, this.#options.config);
  }

  /** Drops the connection without a DISCONNECT packet, as a crash or power cut would: the broker fires the last will. */
  async kill(): Promise<void> {
    this.#cancelReboot();
    const client = this.#client;
    this.#client = undefined;
    this.#connecting?.abandon('the station was killed');
    this.model.stop();
    this.#disconnected();
    if (client) await client.endAsync(true);
  }

  /**
   * Takes the station off the network: a real disconnect without DISCONNECT, so the last will
   * fires. Lock timers keep running, as the hardware's do.
   */
  async goOffline(): Promise<void> {
    this.#cancelReboot();
    const client = this.#client;
    this.#client = undefined;
    this.#connecting?.abandon('the station went offline');
    this.#disconnected();
    if (client) await client.endAsync(true);
  }

  /** Drops the connection, stays down `downMs`, then reconnects. */
  async reboot(downMs: number): Promise<void> {
    await this.goOffline();
    this.#rebootTimer = this.#options.clock.setTimeout(() => {
      this.#rebootTimer = undefined;
      // A failed reconnect after a reboot leaves the station offline; the fleet keeps running.
      this.goOnline().catch(() => undefined);
    }, downMs);
  }

  /**
   * Back to the fixture's starting state, connection included. Resets of one station run one
   * after the other: two at once (two `POST /sim/v1/reset` from two API processes, say) each
   * opened a session with the station's client id to publish its offline record, and the broker
   * closes the older of two sessions with one client id (MQTT 3.1.1, section 3.1.4), which failed
   * the other reset. The temporary session keeps the station's own client id, as real firmware
   * would have only the one: broker logs and ACLs keyed on it see the station, not a stranger.
   */
  reset(): Promise<void> {
    const run = this.#resetting.then(() => this.#resetNow());
    this.#resetting = run.catch(() => undefined);
    return run;
  }

  async #resetNow(): Promise<void> {
    // A reset queued behind the one `stop()` abandoned: the station is gone, it must not reconnect or publish.
    if (this.#stopped) throw stoppedError();
    this.#cancelReboot();
    this.model.reset();
    const wantOnline = this.#options.config.initialStatus === 'online';
    if (wantOnline) {
      if (!this.#client) await this.goOnline();
      return;
    }
    // Offline, the reset state still has to reach the broker: its retained records are what
    // everyone else sees (a lock jammed before the reset must not stay jammed there).
    if (this.#client) await this.goOffline();
    await this.#publishOfflineRecord();
  }

  #cancelReboot(): void {
    if (this.#rebootTimer) this.#options.clock.clearTimeout(this.#rebootTimer);
    this.#rebootTimer = undefined;
  }

  /** The station's identity on the broker: the one given, or its own client id alone. */
  #identity(): ConnectIdentity {
    return this.#options.identity ?? { clientId: `station-sim-${this.#options.config.token}` };
  }

  /** A station that starts offline has been online once: its retained record says `offline`. */
  async #publishOfflineRecord(): Promise<void> {
    const { config } = this.#options;
    const client = createSession(this.#options.transport, {
      ...this.#identity(),
      clean: true,
      reconnectPeriod: 0,
      connectTimeout: CONNECT_TIMEOUT_MS,
      clock: this.#options.linkClock,
    });
    await firstConnect(client, this.#options.transport);
    const token = config.token;
    await client.publishAsync(this.topics.topic('status', { token }), encodePayload('status', this.model.statusPayload('offline')), {
      qos: CONTRACT_QOS,
      retain: true,
    });
    for (const lock of config.locks) {
      const payload = this.model.lockPayload(lock.lockId)!;
      await client.publishAsync(this.topics.topic('lockState', { token, lockId: lock.lockId }), encodePayload('lockState', payload), {
        qos: CONTRACT_QOS,
        retain: true,
      });
    }
    await client.endAsync();
  }
}
