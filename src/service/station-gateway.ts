/**
 * How the `/v1` API reaches stations: only over MQTT, like the real service (DESIGN.md rule 1).
 * The gateway keeps one MQTT session, builds its picture of every station from the retained status
 * and lock-state messages the stations publish, and sends unlock commands on the command topic,
 * waiting for the matching ack. The HTTP layer sees only the `StationGateway` interface, so tests
 * can stand in a fake and the API never learns how stations are reached.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { Fixture } from '../fixture/fixture-schema.js';
import { CONTRACT_QOS, encodePayload, parsePayload } from '../contract/topics.js';
import { SIM_TOPICS } from '../contract/sim-topics.js';
import { connectError, createSession, type MqttTransport } from '../mqtt/transport.js';
import type { SharedIdentity } from '../mqtt/identity.js';
import { redactUrl } from '../shared/redact-url.js';
import type { MqttSession, PublishProperties } from '../mqtt/lean-client/index.js';
import { hexReasonCode, reasonCodeOf } from '../mqtt/mqtt5-session.js';
import type { MqttProtocolVersion } from '../mqtt/mqtt-version.js';
import type { StationConfig } from '../fixture/fixture-schema.js';
import { SimError } from '../errors.js';
import type { Station } from './http/api-schemas.js';
import { TopicRouter, type RoutedTopic } from './gateway/topic-router.js';
import { StationStateCache } from './gateway/station-state-cache.js';
import { GLOBAL_TIMERS, PendingCommands, type CommandTimers } from './gateway/pending-commands.js';
import { UNLOCK_ACCEPTED, UNLOCK_FAILURES, outcomeUnknown, rejectedOutcome, unlockFailed, type UnlockOutcome } from './gateway/unlock-outcome.js';
import { PLAUSIBILITY_LIMITS, RefusalCounter, checkAck, checkLockState, checkStatus, type RefusalReason } from './gateway/plausibility.js';
import { systemServiceClock, type ServiceClock } from './service-clock.js';
import { silentLogger, type ServiceLogger } from './service-logger.js';

export type { UnlockOutcome } from './gateway/unlock-outcome.js';
export type { RefusalReason } from './gateway/plausibility.js';


/** How long the gateway waits for its CONNACK before it takes the broker as unreachable. */
const GATEWAY_CONNECT_TIMEOUT_MS = 10_000;

/** What the HTTP layer needs from the stations. */
export interface StationGateway {
  /** The Station object (interface section 2) of a fixture station; undefined for an unknown token. */
  getStation(token: string): Station | undefined;
  /**
   * Sends an unlock command and waits for the station's answer. Throws `SimError`
   * `STATION_NOT_FOUND` / `LOCK_NOT_FOUND` for a station or lock that does not exist; every other
   * result, including failures, is an `UnlockOutcome`.
   */
  unlock(token: string, lockId: string): Promise<UnlockOutcome>;
}

export interface MqttGatewayOptions {
  /** Broker address, `mqtt://[user:pass@]host:port`. Credentials never appear in logs. */
  mqttUrl: string;
  /**
   * How to reach the broker instead of dialling `mqttUrl`, e.g. an in-memory stream into an
   * embedded broker in the same process. `mqttUrl` still names the broker in logs.
   * @default TCP to `mqttUrl`, with TCP_NODELAY on every socket, including after each reconnect
   */
  transport?: MqttTransport;
  /**
   * MQTT protocol level of the session to an external broker (over `mqttUrl`, or a `tcp`
   * transport): 4 is MQTT 3.1.1, 5 is MQTT 5.0 (docs/mqtt-security.md, "MQTT 5"). In memory, 4.
   * @default the transport's, else the fixture's `mqtt.protocolVersion`, else 4
   */
  mqttVersion?: MqttProtocolVersion;
  /** Which stations exist, their locks and their topic templates. */
  fixture: Fixture;
  /**
   * How long an unlock waits for the station's ack before it answers
   * "Station did not acknowledge the command in time".
   * @default fixture.api.commandTimeoutMs
   */
  commandTimeoutMs?: number;
  /**
   * MQTT client id. Two API processes on one broker need different ids, hence the random part.
   * @default "station-sim-api-<8 random hex digits>"
   */
  clientId?: string;
  /**
   * Who the gateway is on the broker: the service identity (docs/mqtt-security.md). Its client id
   * is used unless `clientId` is given.
   * @default no credentials of its own (the broker URL's, if any)
   */
  identity?: SharedIdentity;
  /** @default a logger that drops everything */
  logger?: ServiceLogger;
  /** Source of `sentAt` in commands. @default real time */
  clock?: ServiceClock;
  /**
   * Names each unlock command. Ids must not repeat among the commands a station sees (it runs a
   * command id once); the simulator under a manual clock passes a seeded sequence so a run replays.
   * @default crypto.randomUUID
   */
  commandIds?: () => string;
  /** Timers of the ack waits. @default the global setTimeout/clearTimeout */
  timers?: CommandTimers;
  /** Delay between reconnect attempts after the session is lost. @default 1000 */
  reconnectMs?: number;
  /** MQTT keepalive in seconds. @default 30 */
  keepaliveSeconds?: number;
  /**
   * At start, how long to wait for the retained state to arrive before declaring the gateway
   * ready (see `#sync`). Best effort: start never fails because of it.
   * @default 2000
   */
  syncTimeoutMs?: number;
}

/** A connected gateway; `stop()` ends every pending wait and closes the MQTT session. */
export interface StartedMqttGateway extends StationGateway {
  /** The broker URL without credentials. */
  readonly mqttUrl: string;
  readonly clientId: string;
  /** True while the session is up and subscribed. */
  readonly connected: boolean;
  /** Unlock commands still waiting for an ack. */
  readonly pendingCommands: number;
  /**
   * Messages from the broker the gateway refused as implausible (src/service/gateway/plausibility.ts),
   * by reason, since start.
   */
  readonly refusedMessages: Readonly<Record<RefusalReason, number>>;
  /** The MQTT protocol level the gateway speaks: 4 (3.1.1) or 5. */
  readonly protocolVersion: MqttProtocolVersion;
  /**
   * MQTT 5: what the broker refused, by packet and reason code since start (`"PUBACK 0x87"`,
   * `"SUBACK 0x87"`, `"CONNACK 0x86"`; MQTT 5.0, sections 3.2.2.2, 3.4.2.1, 3.9.3). Empty at 3.1.1.
   */
  readonly brokerRefusals: Readonly<Record<string, number>>;
  stop(): Promise<void>;
}

/**
 * Connects to the broker, subscribes to the status, lock-state and ack topics of every template
 * set in the fixture, and resolves once the retained state has (very likely) arrived. Rejects with
 * `BROKER_UNREACHABLE` or `BROKER_REFUSED` when the first connection fails; after the first
 * success, its MQTT session reconnects on its own (every `reconnectMs`) and stations show offline
 * while the broker is away.
 */
export async function startMqttGateway(options: MqttGatewayOptions): Promise<StartedMqttGateway> {
  const gateway = new MqttStationGateway(options);
  await gateway.start();
  return gateway;
}

/** The gateway's transport: the one given (at the protocol level asked for, over TCP), else TCP to `mqttUrl`. */
function gatewayTransport(options: MqttGatewayOptions): MqttTransport {
  const given = options.transport;
  if (given?.kind === 'memory') return given;
  const version = options.mqttVersion ?? given?.protocolVersion ?? options.fixture.mqtt?.protocolVersion;
  const transport: MqttTransport = given ?? { kind: 'tcp', url: options.mqttUrl };
  return version === undefined ? transport : { ...transport, protocolVersion: version };
}

/** QoS 1 unlocks the gateway's session has waiting for a PUBACK at most, and behind them in its queue. */
const GATEWAY_MAX_INFLIGHT = 1000;
const GATEWAY_MAX_QUEUED = 20_000;

class MqttStationGateway implements StartedMqttGateway {
  readonly mqttUrl: string;
  readonly clientId: string;
  readonly #options: MqttGatewayOptions;
  readonly #router: TopicRouter;
  readonly #cache = new StationStateCache();
  readonly #pending: PendingCommands;
  readonly #logger: ServiceLogger;
  readonly #clock: ServiceClock;
  readonly #commandIds: () => string;
  readonly #commandTimeoutMs: number;
  readonly #syncTopic: string;
  #client: MqttSession | undefined;
  /** Session up and subscriptions acknowledged. */
  #ready = false;
  #stopped = false;
  /** Errors since the session was last up: only the first is logged. */
  #failedAttempts = 0;
  readonly #syncWaiters = new Map<string, () => void>();
  readonly #refusals: RefusalCounter;
  readonly #transport: MqttTransport;
  readonly protocolVersion: MqttProtocolVersion;
  readonly #brokerRefusals: Record<string, number> = {};

  constructor(options: MqttGatewayOptions) {
    this.#options = options;
    this.mqttUrl = redactUrl(options.mqttUrl);
    this.clientId = options.clientId ?? options.identity?.clientId ?? `station-sim-api-${randomBytes(4).toString('hex')}`;
    this.#router = new TopicRouter(options.fixture.stations);
    this.#pending = new PendingCommands(options.timers);
    this.#logger = options.logger ?? silentLogger();
    this.#clock = options.clock ?? systemServiceClock();
    this.#commandIds = options.commandIds ?? randomUUID;
    this.#refusals = new RefusalCounter({ now: () => this.#clock.now(), log: (line) => this.#logger.warn(line) });
    this.#commandTimeoutMs = options.commandTimeoutMs ?? options.fixture.api.commandTimeoutMs;
    // A topic only this session uses; it carries nothing but the start-up sync marker.
    this.#syncTopic = SIM_TOPICS.serviceSync(this.clientId);
    this.#transport = gatewayTransport(options);
    this.protocolVersion = this.#transport.kind === 'tcp' ? (this.#transport.protocolVersion ?? 4) : 4;
  }

  get brokerRefusals(): Readonly<Record<string, number>> {
    return this.#brokerRefusals;
  }

  /** Counts a refusal the broker gave by reason code (MQTT 5), and returns it as `PACKET 0xNN`. */
  #countBrokerRefusal(packet: 'CONNACK' | 'PUBACK' | 'SUBACK', code: number): string {
    const key = `${packet} ${hexReasonCode(code)}`;
    this.#brokerRefusals[key] = (this.#brokerRefusals[key] ?? 0) + 1;
    return key;
  }

  get connected(): boolean {
    return this.#ready;
  }

  get pendingCommands(): number {
    return this.#pending.size;
  }

  get refusedMessages(): Readonly<Record<RefusalReason, number>> {
    return this.#refusals.counts;
  }

  getStation(token: string): Station | undefined {
    const config = this.#router.station(token);
    return config ? this.#cache.view(config, this.#ready) : undefined;
  }

  async unlock(token: string, lockId: string): Promise<UnlockOutcome> {
    const config = this.#router.station(token);
    if (!config) throw new SimError('STATION_NOT_FOUND');
    if (!this.#cache.hasLock(config, lockId)) throw new SimError('LOCK_NOT_FOUND');
    if (this.#stopped) return unlockFailed('SERVICE_STOPPING');
    // Interface section 3: commands go only to an online station (as `getStation` shows it: a
    // service without its broker shows every station offline). Not publishing at all also keeps a
    // command from sitting in a queue and opening the lock long after the caller gave up.
    const client = this.#client;
    if (!client || !this.#ready || this.#cache.statusOf(token) !== 'online') return unlockFailed('STATION_OFFLINE');

    const commandId = this.#commandIds();
    const topics = this.#router.topicsOf(token)!;
    const answer = this.#pending.wait(commandId, { token, lockId }, this.#commandTimeoutMs);
    const command = encodePayload('unlock', { commandId, sentAt: new Date(this.#clock.now()).toISOString() });
    const topic = topics.topic('unlock', { token, lockId });
    const sent = (error?: Error): void => {
      if (!error) return;
      const code = this.protocolVersion === 5 ? reasonCodeOf(error) : undefined;
      if (code !== undefined && code >= 0x80) {
        // MQTT 5.0, 3.4.2.1: a PUBACK of 0x80 or more means the broker did not take the message,
        // so no station has it and no ack will come: the answer is definite.
        const key = this.#countBrokerRefusal('PUBACK', code);
        const reason = error.message.replace(/^Publish error: /, '');
        this.#logger.warn(`unlock ${commandId} for ${token}/${lockId}: the broker refused it (${key} ${reason})`);
        this.#pending.refuse(commandId, code, reason);
        return;
      }
      // Not settled here: the station may have received the command before the failure, and its
      // ack (or the timeout) is the only honest answer.
      this.#logger.warn(`unlock ${commandId} for ${token}/${lockId}: publish failed (${error.message})`);
    };
    if (this.protocolVersion === 5) client.publish(topic, command, { qos: CONTRACT_QOS, retain: false, properties: this.#commandProperties(config, commandId, token) }, sent);
    else client.publish(topic, command, { qos: CONTRACT_QOS, retain: false }, sent);
    this.#logger.debug(`unlock ${commandId} sent to ${token}/${lockId}`);

    const result = await answer;
    switch (result.kind) {
      case 'ack':
        this.#logger.debug(`unlock ${commandId} ${result.ack.accepted ? 'accepted' : `rejected (${result.ack.reason})`}`);
        return { ...(result.ack.accepted ? UNLOCK_ACCEPTED : rejectedOutcome(result.ack.reason)), commandId };
      // No ack: the station may have the command (or get it from a persistent session) and act on
      // it until its TTL runs out, so the outcome is unknown, not a failure (docs/api.md).
      case 'timeout':
        this.#logger.info(`unlock ${commandId} for ${token}/${lockId}: no ack within ${this.#commandTimeoutMs} ms; outcome unknown`);
        return { ...outcomeUnknown('ACK_TIMEOUT', config.behaviour.commandTtlMs), commandId };
      case 'cancelled':
        return { ...outcomeUnknown('STOPPED_IN_FLIGHT', config.behaviour.commandTtlMs), commandId };
      case 'refused':
        return { ...unlockFailed('BROKER_REFUSED', `${UNLOCK_FAILURES.BROKER_REFUSED} (PUBACK reason code ${hexReasonCode(result.reasonCode)}: ${result.reason})`), commandId };
    }
  }

  /**
   * The MQTT 5 properties of an unlock command (MQTT 5.0, section 3.3.2.3):
   * - Message Expiry Interval (3.3.2.3.3): the station's command TTL, in whole seconds rounded up, so
   *   the broker drops a command queued for an away station once the station would refuse it anyway
   *   (the station's own `commandTtlMs` check stays: the broker counts from when it got the command).
   * - User Properties (3.3.2.3.7): the fixture's `mqtt.mqtt5.commandUserProperties`, as given.
   * - Response Topic and Correlation Data (3.3.2.3.5, 3.3.2.3.6; 4.10 request/response), when the
   *   fixture's `mqtt.mqtt5.requestResponse` is on: the station's own acks topic (which the trust
   *   model lets it publish on) and the command id.
   */
  #commandProperties(config: StationConfig, commandId: string, token: string): PublishProperties {
    const settings = this.#options.fixture.mqtt?.mqtt5;
    const properties: PublishProperties = { messageExpiryInterval: Math.max(1, Math.ceil(config.behaviour.commandTtlMs / 1000)) };
    if (settings?.commandUserProperties) properties.userProperties = settings.commandUserProperties;
    if (settings?.requestResponse === true) {
      properties.responseTopic = this.#router.topicsOf(token)!.topic('acks', { token });
      properties.correlationData = Buffer.from(commandId);
    }
    return properties;
  }

  async start(): Promise<void> {
    const options = this.#options;
    const client = createSession(this.#transport, {
      ...options.identity,
      clientId: this.clientId,
      clean: true,
      keepalive: options.keepaliveSeconds ?? 30,
      reconnectPeriod: options.reconnectMs ?? 1000,
      connectTimeout: GATEWAY_CONNECT_TIMEOUT_MS,
      // One session carries every unlock of the API: the station default (100 in flight, 1,000
      // queued) would refuse unlocks beyond 1,100 at once, a load the API otherwise takes.
      maxInflight: GATEWAY_MAX_INFLIGHT,
      maxQueued: GATEWAY_MAX_QUEUED,
    });
    this.#client = client;
    client.on('message', (topic, payload) => this.#onMessage(topic, payload));

    await new Promise<void>((resolve, reject) => {
      let started = false;
      const failStart = (error: Error): void => {
        if (started) return;
        started = true;
        this.#client = undefined;
        client.end(true);
        reject(connectError(error, this.mqttUrl));
      };
      client.on('error', (error) => {
        if (!started) {
          failStart(error);
          return;
        }
        // MQTT 5.0, 3.2.2.2: a refused CONNACK carries its reason code.
        const code = this.protocolVersion === 5 ? reasonCodeOf(error) : undefined;
        if (code !== undefined && code >= 0x80) this.#countBrokerRefusal('CONNACK', code);
        // While the broker is away every reconnect fails the same way, once a second: say it once.
        this.#failedAttempts += 1;
        if (this.#failedAttempts === 1) {
          this.#logger.warn(`MQTT ${this.mqttUrl}: ${error.message}; retrying, and saying nothing more until it is back`);
        }
      });
      client.on('close', () => {
        if (!started) {
          failStart(new Error('connection closed'));
          return;
        }
        if (this.#ready && !this.#stopped) this.#logger.warn(`MQTT ${this.mqttUrl}: connection lost; stations show offline until it is back`);
        this.#ready = false;
        // An unlock replayed after a reconnect would open a lock after its caller was told the
        // command failed: the lean client never replays, it fails what the broker has not
        // acknowledged when the connection closes.
      });
      client.on('connect', () => {
        // Back after a lost connection, the picture is rebuilt from what the broker retains now: a
        // broker that restarted empty, or a status cleared meanwhile, must not leave a station
        // shown online from memory (and sent commands that nobody answers).
        if (started) this.#cache.clear();
        this.#subscribe(client).then(
          async () => {
            if (started) {
              await this.#sync(client);
              if (this.#stopped || !client.connected) return;
              this.#ready = true;
              const failed = this.#failedAttempts;
              this.#failedAttempts = 0;
              this.#logger.info(`MQTT ${this.mqttUrl}: reconnected${failed > 0 ? ` after ${failed} failed ${failed === 1 ? 'attempt' : 'attempts'}` : ''}`);
              return;
            }
            this.#ready = true;
            await this.#sync(client);
            if (started) return; // the first connection failed while syncing; already rejected
            started = true;
            this.#logger.info(`MQTT ${this.mqttUrl}: connected as ${this.clientId}`);
            resolve();
          },
          (error: Error) => {
            if (!started) failStart(error);
            else this.#logger.error(`MQTT ${this.mqttUrl}: ${error.message}`);
          },
        );
      });
    });
  }

  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#ready = false;
    this.#pending.cancelAll();
    for (const done of this.#syncWaiters.values()) done();
    const client = this.#client;
    this.#client = undefined;
    if (client) await client.endAsync(!client.connected);
  }

  async #subscribe(client: MqttSession): Promise<void> {
    // Acks at QoS 1: an unlock's answer must arrive. Status and lock state at QoS 0: they are
    // retained and republished on every change, so a lost one is replaced by the next, and QoS 0
    // spares the broker a PUBACK and an outgoing-queue entry per delivery on the hot path.
    const subscriptions: Record<string, { qos: 0 | 1 }> = { [this.#syncTopic]: { qos: 0 } };
    for (const topic of this.#router.filtersOf(['status', 'lockState'])) subscriptions[topic] = { qos: 0 };
    for (const topic of this.#router.filtersOf(['acks'])) subscriptions[topic] = { qos: CONTRACT_QOS };
    const granted = await client.subscribeAsync(subscriptions);
    const refused = granted.filter((grant) => grant.qos === 128);
    if (refused.length > 0) {
      // MQTT 5.0, 3.9.3: each refused filter has its own reason code (0x87 not authorized, …).
      const named = refused.map((grant) => {
        if (grant.reasonCode === undefined) return grant.topic;
        return `${grant.topic} (${this.#countBrokerRefusal('SUBACK', grant.reasonCode)})`;
      });
      throw new SimError('BROKER_REFUSED', `The MQTT broker refused the subscription to ${named.join(', ')}`);
    }
  }

  /**
   * The broker sends retained messages in answer to the subscription, but nothing says when the
   * last one has arrived. A marker published after the SUBACK and echoed back travels behind them
   * on the same session, so once it is back the retained state is (in practice) in the cache, and a
   * client calling right after start sees `online` stations rather than a transient `offline`.
   */
  async #sync(client: MqttSession): Promise<void> {
    const marker = randomUUID();
    const echoed = new Promise<void>((resolve) => this.#syncWaiters.set(marker, resolve));
    // On the gateway's own timers, as the ack waits are, so a test's fake timers move this wait too.
    const timers = this.#options.timers ?? GLOBAL_TIMERS;
    let timer: unknown;
    const timeout = new Promise<void>((resolve) => {
      timer = timers.setTimeout(resolve, this.#options.syncTimeoutMs ?? 2000);
    });
    client.publish(this.#syncTopic, marker, { qos: CONTRACT_QOS, retain: false });
    await Promise.race([echoed, timeout]);
    timers.clearTimeout(timer);
    this.#syncWaiters.delete(marker);
  }

  #onMessage(topic: string, payload: Buffer): void {
    if (topic === this.#syncTopic) {
      this.#syncWaiters.get(payload.toString())?.();
      return;
    }
    const routes = this.#router.route(topic);
    if (routes.length === 0) {
      if (this.#router.fitsTemplate(topic)) this.#refusals.refuse('unknownStation', undefined, 'a message');
      return;
    }
    if (payload.length > PLAUSIBILITY_LIMITS.maxPayloadBytes) {
      this.#refusals.refuse('oversized', routes[0]!.token, `a ${payload.length}-byte message`);
      return;
    }
    // Custom templates can make kinds overlap (topic-router.ts): the payload decides, so a
    // refusal counts only when no reading of the topic takes the message.
    let refused: RefusalReason | undefined;
    for (const route of routes) {
      const reason = this.#apply(route, payload);
      if (reason === undefined) return;
      refused ??= reason;
    }
    this.#refusals.refuse(refused!, routes[0]!.token, `a ${routes[0]!.kind} message`);
  }

  /**
   * Applies a message to the cache or a waiting unlock once it is plausible (plausibility.ts);
   * returns why not otherwise. A malformed message is refused, never thrown: anything on the broker
   * can publish on these topics.
   *
   * A zero-length retained message clears the topic (MQTT 3.1.1, section 3.3.1.3; live subscribers
   * get it with the retain flag 0, so any empty payload counts), but whoever sends it is not the
   * station saying it went offline: only the station's own `offline` status,
   * or its will, takes a station offline. So a clear changes nothing here; the station's next
   * status (and every reconnect, which rebuilds the cache) says what is true.
   */
  #apply(route: RoutedTopic, payload: Buffer): RefusalReason | undefined {
    const config = this.#router.station(route.token)!;
    const now = this.#clock.now();
    switch (route.kind) {
      case 'status': {
        if (payload.length === 0) return 'emptyPayload';
        const status = parsePayload('status', payload);
        if (!status) return 'malformed';
        const refused = checkStatus(status, config, now);
        if (refused) return refused;
        this.#cache.applyStatus(route.token, status);
        return undefined;
      }
      case 'lockState': {
        if (route.lockId === undefined) return 'malformed';
        if (payload.length === 0) return 'emptyPayload';
        const state = parsePayload('lockState', payload);
        if (!state) return 'malformed';
        const listed = this.#cache.hasLock(config, route.lockId);
        const refused = checkLockState(state, route.lockId, listed, now);
        if (refused) return refused;
        this.#cache.applyLockState(route.token, route.lockId, state);
        return undefined;
      }
      case 'acks': {
        const ack = parsePayload('acks', payload);
        if (!ack) return 'malformed';
        const refused = checkAck(ack);
        if (refused) return refused;
        const delivery = this.#pending.settle(route.token, ack);
        if (delivery === 'settled') return undefined;
        this.#logger.debug(`ignored ack ${ack.commandId} of ${route.token}: ${delivery === 'duplicate' ? 'already answered' : 'nothing waits for it'}`);
        return delivery === 'duplicate' ? 'duplicateAck' : 'unexpectedAck';
      }
    }
  }
}
