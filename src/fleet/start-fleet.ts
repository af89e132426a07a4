/**
 * A fleet: every station of a fixture as its own MQTT session. Starting resolves once every
 * station is connected and subscribed (or has left its retained `offline` record); the first
 * connection failure stops what was started and rejects with one clear error.
 */
import { DEFAULT_MAX_RECONNECT_MS, StationClient, readUnlockCommand, type CommandDelivery } from '../mqtt/station-client.js';
import { FleetReconnect } from '../mqtt/reconnect-policy.js';
import type { LockPhase } from '../station/station-model.js';
import { groupTopics } from '../contract/topics.js';
import { startFleetAgent, type StartedFleetAgent } from './fleet-agent.js';
import { UndeliveredCommands } from './undelivered-commands.js';
import { heartbeatBudget } from './heartbeat-budget.js';
import type { SimFaultEvent } from '../control/control-protocol.js';
import type { MqttTransport } from '../mqtt/transport.js';
import { MQTT5_NEEDS_EXTERNAL_BROKER, type MqttProtocolVersion } from '../mqtt/mqtt-version.js';
import type { Mqtt5Settings } from '../fixture/mqtt-schema.js';
import { SimError } from '../errors.js';
import type { ConnectIdentity, MqttIdentities } from '../mqtt/identity.js';
import { systemClock, type Clock } from '../shared/clock.js';
import { linkDraw, reconnectRandom, seededRandom } from '../station/random.js';
import { LinkControl } from '../mqtt/link-shaping.js';
import type { StationConfig } from '../fixture/fixture-schema.js';
import type { JudgeSettings } from '../fixture/judge-schema.js';
import { JudgeLog } from '../judge/judge-log.js';
import { ServiceJudge, type PublishedMisdeed, type ReceivedCommand } from '../judge/service-judge.js';
import type { StationMisdeed } from '../broker/station-watch.js';

export interface FleetOptions {
  stations: StationConfig[];
  transport: MqttTransport;
  /**
   * Who each station and the fleet agent are on the broker (identity.ts). Station passwords are
   * read before any station starts, `concurrency` at a time; certificates as each one connects.
   * @default client ids of their own, no credentials but the broker URL's
   */
  identities?: MqttIdentities;
  /** Seed of the random source; each station draws from its own stream of it. */
  seed: number;
  /** @default systemClock */
  clock?: Clock;
  /**
   * How many stations connect at the same time. Bounded so a 100,000-station fleet does not
   * open every session in one tick.
   * @default 200
   */
  concurrency?: number;
  /** Called as stations come up, for progress displays. */
  onProgress?: (ready: number, total: number) => void;
  /** MQTT keepalive of every station, seconds, over each one's `behaviour.keepaliveSeconds`. @default the fixture's */
  keepaliveSeconds?: number;
  /**
   * Answer the control plane over MQTT (docs/control-plane.md). Off for benchmarks of the bare fleet.
   * @default true
   */
  control?: boolean;
  /**
   * The fixture's `judge` section: the service rules every command a station receives is judged
   * by (docs/judge.md). Findings go to `StartedFleet.judge` and, with `control`, to the event topic.
   * @default every rule on, default thresholds
   */
  judge?: JudgeSettings;
  /**
   * Told every command a station receives, as the judge sees it: the transcript records them, so
   * `station-sim transcript judge` can judge the run again offline (src/transcript/transcript-judge.ts).
   * @default ignored
   */
  onCommand?: (command: ReceivedCommand) => void;
  /**
   * Told every misdeed the embedded broker passed on (`StartedFleet.judgePublished`), as the judge
   * sees it: the transcript records them for `station-sim transcript judge`.
   * @default ignored
   */
  onPublished?: (seen: PublishedMisdeed) => void;
  /**
   * Whether a command id is one station-sim's own `/v1` gateway in this process published: no
   * service rule is told of those (docs/judge.md, "Who is blamed").
   * @default none is
   */
  isGatewayCommand?: (commandId: string) => boolean;
  /**
   * Heartbeats a second the fleet publishes at most; past it every station beats less often by the
   * same factor (heartbeat-budget.ts). 0 is no cap.
   * @default 1000
   */
  maxHeartbeatsPerSecond?: number;
  /**
   * MQTT protocol level of every station and the fleet agent on a `tcp` transport: 4 (MQTT 3.1.1)
   * or 5 (MQTT 5.0, docs/mqtt-security.md, "MQTT 5"). In memory (the embedded broker) only 4.
   * @default the transport's, else 4
   */
  mqttVersion?: MqttProtocolVersion;
  /** The fixture's `mqtt.mqtt5` section: what the stations use of MQTT 5 (session expiry). @default its defaults */
  mqtt5?: Mqtt5Settings;
}

/** The fleet's transport at the protocol level asked for; MQTT 5 in memory is refused (the embedded broker speaks 3.1.1). */
function fleetTransport(options: FleetOptions): MqttTransport {
  const { transport, mqttVersion } = options;
  if (mqttVersion === undefined) return transport;
  if (transport.kind === 'memory') {
    if (mqttVersion === 5) throw new SimError('BAD_REQUEST', MQTT5_NEEDS_EXTERNAL_BROKER);
    return transport;
  }
  return { ...transport, protocolVersion: mqttVersion };
}

export interface StartedFleet {
  readonly stations: ReadonlyMap<string, StationClient>;
  get(token: string): StationClient | undefined;
  /** The link of a station whose fixture gives it one (`behaviour.link`), to read or change while it runs. */
  link(token: string): LinkControl | undefined;
  /** What the judge found in the commands this fleet's stations received. */
  readonly judge: JudgeLog;
  /** Stations whose MQTT session is up now. */
  onlineCount(): number;
  /**
   * Reads the retained commands the broker still holds on this fleet's unlock topics and judges
   * them (`service.retained-command`). A command published retained while its station was
   * connected reached it live with the flag cleared: only a fresh subscription shows it. The CLI
   * calls it at stop, before the verdict (src/cli/judge-notice.ts).
   */
  judgeRetainedCommands(): Promise<void>;
  /**
   * Judges a misdeed the embedded broker saw on the fixture's station topics (a command to an
   * unknown station, a command published retained, a spoofed station message: docs/judge.md,
   * "What the broker sees"); `startSimulator` hands the broker's station watch to it.
   */
  judgePublished(misdeed: StationMisdeed): void;
  /** Clean shutdown: every station publishes `offline` before it disconnects. */
  stop(): Promise<void>;
}

export async function startFleet(options: FleetOptions): Promise<StartedFleet> {
  const transport = fleetTransport(options);
  const clock = options.clock ?? systemClock;
  const concurrency = options.concurrency ?? 200;
  const stations = new Map<string, StationClient>();
  /** The links of stations whose fixture gives them one (src/mqtt/link-shaping.ts); the others are never shaped. */
  const links = new Map<string, LinkControl>();
  const { identities } = options;
  // Read first: a station whose password cannot be read stops the start before anything connects.
  const identityOf = await readStationIdentities(options, concurrency);
  const agentIdentity = options.control === false ? undefined : await identities?.control('agent');
  const judging = options.judge?.enabled !== false;
  // Set once the agent is up; until then no station has been online, so nothing is watched.
  let undelivered: UndeliveredCommands | undefined;
  const agent =
    options.control === false
      ? undefined
      : await startFleetAgent({
          transport,
          stations,
          ...(agentIdentity ? { identity: agentIdentity } : {}),
          ...(judging ? { onWatched: (topic: string, payload: Buffer, qos: 0 | 1 | 2) => undelivered?.onPublished(topic, payload, qos) } : {}),
        });
  const phasesWanted = (): boolean => agent?.phasesWanted === true;
  const judgeLog = new JudgeLog();
  const judge = new ServiceJudge({
    settings: options.judge ?? {},
    onFinding: (finding) => {
      judgeLog.add(finding);
      agent?.publishEvent(finding.token, { type: 'judge.finding', ...finding });
    },
  });
  const stop = async (): Promise<void> => {
    undelivered?.stop();
    try {
      await runBounded([...stations.values()], concurrency, (station) => station.stop());
    } finally {
      // The agent's client reconnects forever: left running, the process could not exit.
      await agent?.stop();
    }
  };
  const { take, onCommand } = commandTakers(options, judge, clock);
  if (agent && judging) {
    undelivered = new UndeliveredCommands({
      agent,
      stations,
      topics: groupTopics(options.stations).distinct,
      clock,
      ...(options.isGatewayCommand ? { isGatewayCommand: options.isGatewayCommand } : {}),
      judge: take,
    });
  }
  const shared = sharedStationOptions(options, { transport, clock, agent, phasesWanted, onCommand, undelivered });
  // Everything from here on runs with the agent up, so a failure anywhere (a station that cannot
  // be built or cannot connect) stops it and the stations built so far.
  try {
    buildStations(options, { shared, identityOf, stations, links });
    // Each station holds its own now; the map would otherwise live as long as the fleet's closures.
    identityOf.clear();
    let ready = 0;
    await runBounded([...stations.values()], concurrency, async (station) => {
      await station.start();
      ready += 1;
      options.onProgress?.(ready, stations.size);
    });
  } catch (error) {
    try {
      await stop();
    } catch {
      // The start's own error says what went wrong; a station that then fails to stop adds nothing.
    }
    throw error;
  }
  return {
    stations,
    judge: judgeLog,
    get: (token) => stations.get(token),
    link: (token) => links.get(token),
    judgeRetainedCommands: () => judgeRetainedCommands(options, { agent, judge, stations, clock }),
    judgePublished: (misdeed) => judgePublished(options, { judge, clock }, misdeed),
    onlineCount: () => countConnected(stations),
    stop,
  };
}

/** Runs `task` over `items` with at most `limit` in flight; the first failure stops new work and rejects. */
async function runBounded<T>(items: T[], limit: number, task: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failed = false;
  const worker = async (): Promise<void> => {
    while (!failed && next < items.length) {
      const item = items[next++]!;
      try {
        await task(item);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  };
  const results = await Promise.allSettled(Array.from({ length: Math.min(limit, items.length) }, worker));
  const rejected = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (rejected) throw rejected.reason;
}

/**
 * The link of a station whose fixture gives it one: it shapes the station's in-memory session
 * through the broker's acceptor, and a session over the network in its own client (link-shaping.ts).
 */
function linkOf(config: StationConfig, options: FleetOptions, clock: Clock): LinkControl | undefined {
  if (config.behaviour.link === undefined) return undefined;
  return new LinkControl({ conditions: config.behaviour.link, clock, draw: linkDraw(options.seed, config.stationId) });
}

/** What `StartedFleet.judgeRetainedCommands` does, for the fleet's agent, judge and stations. */
async function judgeRetainedCommands(
  options: FleetOptions,
  { agent, judge, stations, clock }: { agent: StartedFleetAgent | undefined; judge: ServiceJudge; stations: Map<string, StationClient>; clock: Clock },
): Promise<void> {
  if (!agent || !judge.enabled || stations.size === 0) return;
  const { distinct } = groupTopics(options.stations);
  const retained = await agent.readRetained(distinct.map((topics) => topics.filter('unlock')));
  if (retained.length === 0) return;
  const configOf = new Map(options.stations.map((config) => [config.token, config]));
  for (const { topic, payload } of retained) {
    const address = distinct.map((topics) => topics.match('unlock', topic)).find((found) => found?.lockId !== undefined);
    const station = address && stations.get(address.token);
    const config = address && configOf.get(address.token);
    if (!address || !station || !config) continue;
    const received: ReceivedCommand = {
      token: address.token,
      lockId: address.lockId!,
      qos: 1,
      retain: true,
      payload,
      command: readUnlockCommand(payload),
      now: clock.now(),
      online: station.connected,
      onlineSince: undefined,
      locks: config.locks,
      commandTtlMs: config.behaviour.commandTtlMs,
    };
    // Recorded too, as a retained delivery, so `transcript judge` finds it again.
    if (judge.observeRetainedAtStop(received)) options.onCommand?.(received);
  }
}

/** What `StartedFleet.judgePublished` does: a misdeed the embedded broker saw, to the judge and the transcript. */
function judgePublished(options: FleetOptions, { judge, clock }: { judge: ServiceJudge; clock: Clock }, misdeed: StationMisdeed): void {
  if (options.judge?.enabled === false) return;
  const command = misdeed.message === 'unlock' ? readUnlockCommand(misdeed.payload) : undefined;
  const seen: PublishedMisdeed = { ...misdeed, command, now: clock.now() };
  if (command !== undefined && options.isGatewayCommand?.(command.commandId)) seen.fromGateway = true;
  judge.observePublished(seen);
  options.onPublished?.(seen);
}

function countConnected(stations: Map<string, StationClient>): number {
  let count = 0;
  for (const station of stations.values()) if (station.connected) count += 1;
  return count;
}

/** Every station's identity, read before anything connects; empty without `identities`. */
async function readStationIdentities(options: FleetOptions, concurrency: number): Promise<Map<string, ConnectIdentity>> {
  const { identities } = options;
  const identityOf = new Map<string, ConnectIdentity>();
  if (identities) {
    await runBounded(options.stations, concurrency, async (config) => {
      identityOf.set(config.token, await identities.station(config.token));
    });
  }
  return identityOf;
}

/**
 * Where the fleet's commands go. `take`: a command as the fleet saw it, delivered or seen going to
 * nobody, to the judge and the transcript. `onCommand`: one callback for every station (each is
 * told its station, so no station holds closures of its own); undefined when nobody listens.
 */
function commandTakers(
  options: FleetOptions,
  judge: ServiceJudge,
  clock: Clock,
): { take: (received: ReceivedCommand) => void; onCommand: ((delivery: CommandDelivery, config: StationConfig) => void) | undefined } {
  const judging = judge.enabled;
  const take = (received: ReceivedCommand): void => {
    if (judging) judge.observe(received);
    options.onCommand?.(received);
  };
  const onCommand = (delivery: CommandDelivery, config: StationConfig): void => {
    // A live command of station-sim's own gateway is nothing the judge tells of (service-judge.ts):
    // unless a transcript records it, nothing is built for it, and judging costs an unlock one lookup.
    if (!options.onCommand && !delivery.retain && delivery.command !== undefined && options.isGatewayCommand?.(delivery.command.commandId) === true) return;
    take(receivedCommand(delivery, config, clock.now(), options.isGatewayCommand));
  };
  return { take, onCommand: judging || options.onCommand ? onCommand : undefined };
}

/** A command as a station received it, for the judge and the transcript. Runs once per command a station receives. */
function receivedCommand(delivery: CommandDelivery, config: StationConfig, now: number, isGatewayCommand: FleetOptions['isGatewayCommand']): ReceivedCommand {
  const received: ReceivedCommand = {
    token: config.token,
    lockId: delivery.lockId,
    qos: delivery.qos,
    retain: delivery.retain,
    payload: delivery.payload,
    command: delivery.command,
    now,
    online: delivery.online,
    onlineSince: delivery.onlineSince,
    locks: config.locks,
    commandTtlMs: config.behaviour.commandTtlMs,
  };
  // Set, not spread: this runs once per command a station receives.
  if (delivery.properties !== undefined) received.properties = delivery.properties;
  if (delivery.command !== undefined && isGatewayCommand?.(delivery.command.commandId)) received.fromGateway = true;
  return received;
}

/** The options every station of the fleet shares: one set of callbacks, each told its station. */
function sharedStationOptions(
  options: FleetOptions,
  { transport, clock, agent, phasesWanted, onCommand, undelivered }: {
    transport: MqttTransport;
    clock: Clock;
    agent: StartedFleetAgent | undefined;
    phasesWanted: () => boolean;
    onCommand: ((delivery: CommandDelivery, config: StationConfig) => void) | undefined;
    undelivered: UndeliveredCommands | undefined;
  },
) {
  const { scale: heartbeatScale } = heartbeatBudget(options.stations, options.maxHeartbeatsPerSecond);
  return {
    transport,
    clock,
    ...(heartbeatScale === 1 ? {} : { heartbeatScale }),
    ...(agent
      ? {
          onFaultApplied: (event: SimFaultEvent, config: StationConfig) => agent.publishEvent(config.token, event),
          onLockPhase: (event: LockPhase, config: StationConfig) => agent.publishEvent(config.token, { type: 'lock.phase', ...event }),
          wantsLockPhases: phasesWanted,
        }
      : {}),
    // `judge.enabled: false` (the bench's judge-off half) leaves the station with no hook unless a
    // transcript records what stations receive.
    ...(onCommand ? { onCommand } : {}),
    ...(undelivered ? { onOnlineChange: undelivered.onOnlineChange } : {}),
    ...(options.keepaliveSeconds === undefined ? {} : { keepaliveSeconds: options.keepaliveSeconds }),
    ...(options.mqtt5 === undefined || transport.kind === 'memory' ? {} : { mqtt5: options.mqtt5 }),
  };
}

/** Builds a client for each station of the fixture into `stations` (and its link into `links`), none started. */
function buildStations(
  options: FleetOptions,
  { shared, identityOf, stations, links }: {
    shared: ReturnType<typeof sharedStationOptions>;
    identityOf: Map<string, ConnectIdentity>;
    stations: Map<string, StationClient>;
    links: Map<string, LinkControl>;
  },
): void {
  const { transport, clock } = shared;
  // Once the broker takes one station back after an outage, the others follow within a window.
  const fleetReconnect = new FleetReconnect({ maxMs: DEFAULT_MAX_RECONNECT_MS });
  for (const config of options.stations) {
    const link = linkOf(config, options, clock);
    if (link) links.set(config.token, link);
    stations.set(
      config.token,
      new StationClient({
        ...shared,
        ...(link ? { link } : {}),
        // In memory the link wraps the broker's acceptor; over the network the station's client shapes its own connection.
        ...(link && transport.kind === 'memory' ? { transport: { kind: 'memory', broker: link.acceptor(transport.broker) } } : {}),
        config,
        ...(identityOf.has(config.token) ? { identity: identityOf.get(config.token)! } : {}),
        random: seededRandom(options.seed, config.stationId),
        reconnectRandom: reconnectRandom(options.seed, config.stationId),
        fleetReconnect,
      }),
    );
  }
}
