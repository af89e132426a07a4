/**
 * The service rules (docs/judge.md): the fleet shows the judge every command a station receives,
 * with what MQTT told about it (QoS, retain flag) and what the station knew (its status, since when
 * it is online, its locks, its command TTL). The judge says which rules the backend broke; the
 * station acts on the command as before, judged or not.
 *
 * "Offline", observably: the station's retained status said `offline` from the moment it went off
 * (its will, or its clean stop) until its current session published `online`. A command whose
 * `sentAt` is earlier than that moment (less the skew allowed) was sent while every subscriber of
 * the status saw `offline`: the broker queued it, or kept it retained, and it reached the station on
 * reconnect. So is a command that arrives while the station's model is not online. A command past
 * its TTL is judged stale only: the station refuses it whatever it was sent to.
 */
import type { JudgeRuleId, JudgeSettings } from '../fixture/judge-schema.js';
import type { UnlockCommand } from '../contract/payloads.js';
import { PLAUSIBILITY_LIMITS } from '../mqtt/plausibility.js';
import type { PublishProperties } from '../mqtt/lean-client/index.js';
import { parseIsoUtc } from '../contract/payloads.js';
import type { StationMisdeed } from '../broker/station-watch.js';
import type { JudgeFinding } from './judge-log.js';

/** A command as a station received it (src/mqtt/station-client.ts `onCommand`). */
export interface ReceivedCommand {
  token: string;
  /** The lock the topic names. */
  lockId: string;
  qos: 0 | 1;
  retain: boolean;
  payload: Buffer;
  /** The payload read as a command by the station (undefined: not one, or too large to read). */
  command: UnlockCommand | undefined;
  /** The station's time when it arrived. */
  now: number;
  /** Whether the station's model was online when it arrived. */
  online: boolean;
  /** When the station's current session published `online`; undefined while offline. */
  onlineSince: number | undefined;
  /** The locks the station has. */
  locks: readonly { lockId: string }[];
  commandTtlMs: number;
  /**
   * Published by station-sim's own `/v1` gateway in this process (its command ids are known): no
   * service rule is told of it, since nobody could fix the gateway; what a `/v1` client made it do
   * is the client rules' to judge (`client.unlock-burst`).
   */
  fromGateway?: boolean;
  /** Read at stop from what the broker still held, not delivered to the station (`observeRetainedAtStop`). */
  heldAtStop?: boolean;
  /**
   * Over MQTT 5, the command's PUBLISH properties as the station got them (MQTT 5.0, 3.3.2.3): the
   * Message Expiry Interval left, User Properties, Response Topic, Correlation Data. Absent at 3.1.1.
   */
  properties?: PublishProperties;
  /**
   * Seen by the fleet's agent on the topic of a station that was offline with a clean session
   * (`StartedFleet`, "commands delivered to nobody"): the broker had no session to deliver it to,
   * so the station never received it and never will.
   */
  undelivered?: boolean;
}

/**
 * A PUBLISH the embedded broker passed on as a misdeed (src/broker/station-watch.ts): a command to
 * a station the fixture does not have, a command published retained, or a station's message
 * published by another client. No station's delivery shows any of them as such.
 */
export interface PublishedMisdeed extends StationMisdeed {
  /** A command's payload read as the station would (`readUnlockCommand`); undefined for other messages. */
  command: UnlockCommand | undefined;
  /** When the fleet heard of it. */
  now: number;
  /** Published by station-sim's own `/v1` gateway (its command ids are known): no rule is told. */
  fromGateway?: boolean;
}

/** A finding of a service rule: it always names the station that received the command. */
export type ServiceFinding = JudgeFinding & { token: string };

export interface ServiceJudgeOptions {
  /** The fixture's `judge` section. */
  settings: JudgeSettings;
  /** Each finding, as it is found. */
  onFinding: (finding: ServiceFinding) => void;
  /** Command ids remembered over all stations, for `service.command-id-reused`. @default 100000 */
  maxRememberedCommands?: number;
}

/**
 * Command ids remembered for `service.command-id-reused`, over all stations together; past it the
 * oldest are forgotten first (a fleet of 10,000 stations must not hold millions). A reuse of a
 * forgotten id is not recognised, which a judge may miss but never invents.
 */
export const REMEMBERED_COMMANDS = 100_000;

interface StationMemory {
  /** The last arrival times, at most `maxCommands + 1` of them: all the rate needs, however long the window. */
  arrivals: number[];
  /** Over the rate now: told once until the rate falls back under it. */
  overRate: boolean;
  /** Per lock, the last arrival times of new commands (fresh ids) and whether the storm was told. */
  locks: Map<string, { arrivals: number[]; told: boolean }>;
}

export class ServiceJudge {
  readonly #settings: NonNullable<JudgeSettings['rules']>;
  readonly #enabled: boolean;
  readonly #onFinding: ServiceJudgeOptions['onFinding'];
  readonly #maxRemembered: number;
  /** Only stations that received a command have an entry (the fleet's own stations: bounded by it). */
  readonly #stations = new Map<string, StationMemory>();
  /**
   * Retained commands already told, `token\nlockId\npayload`, and who told them: the broker (at
   * their publication) or a delivery. A read at stop tells none of them again, and a delivery on
   * a subscription none the broker told.
   */
  readonly #retainedTold = new Map<string, 'broker' | 'delivery'>();
  /** commandId → what the command was and which station it went to, oldest first (Map order is insertion order). */
  readonly #commands = new Map<string, { token: string; lockId: string; sentAt: string | undefined }>();

  constructor(options: ServiceJudgeOptions) {
    this.#settings = options.settings.rules ?? {};
    this.#enabled = options.settings.enabled !== false;
    this.#onFinding = options.onFinding;
    this.#maxRemembered = options.maxRememberedCommands ?? REMEMBERED_COMMANDS;
  }

  /** False when the fixture says `judge.enabled: false`: `observe` then does nothing at all. */
  get enabled(): boolean {
    return this.#enabled;
  }

  /** Arrival times held for the rate, over all stations (for the tests of the bound). */
  get heldArrivals(): number {
    let held = 0;
    for (const memory of this.#stations.values()) held += memory.arrivals.length;
    return held;
  }

  /** Command ids remembered now, over all stations (for the tests of the bound). */
  get rememberedCommands(): number {
    return this.#commands.size;
  }

  observe(command: ReceivedCommand): void {
    if (!this.#enabled) return;
    // An empty payload is how MQTT clears a retained message (MQTT 3.1.1, 3.3.1.3): a backend that
    // clears the retained command it published by mistake is putting things right, not sending one.
    if (command.payload.length === 0) return;
    const body = command.command;
    const commandId = body?.commandId;
    // Retained: sent again by the broker on a subscription, not by the service now; the station
    // ignores it, and what else is wrong with it was judged when it came live.
    if (command.retain) {
      if (!this.#tellRetained(retainedKey(command), 'delivery')) return;
      this.#report(
        command,
        'service.retained-command',
        command.heldAtStop
          ? 'still held retained by the broker at stop, read with a fresh subscription: every station that subscribes gets it; clear it with an empty retained payload'
          : 'delivered with the retain flag on subscription: the broker keeps it and hands it to the station on every subscription',
        commandId,
      );
      return;
    }
    // station-sim's own gateway: told nothing, and not remembered either. Whether a command is the
    // gateway's is known by its id alone, so a later command with one of its ids is the gateway's
    // too: remembering them could never show a reuse, and would cost every unlock a map entry.
    if (command.fromGateway) return;
    const report = (rule: JudgeRuleId, detail: string, id?: string): void => this.#report(command, rule, detail, id);
    if (command.qos === 0) report('service.qos0-command', 'delivered at QoS 0; the contract is QoS 1', commandId);
    const memory = this.#memory(command.token);
    this.#checkRate(memory, command.now, (detail) => report('service.command-rate', detail, commandId));
    if (!body) {
      report('service.bad-payload', describeBadPayload(command.payload));
      return;
    }
    const sentAtMs = body.sentAt === undefined ? undefined : parseIsoUtc(body.sentAt);
    const earlier = this.#commands.get(body.commandId);
    if (earlier) {
      if (earlier.token !== command.token || earlier.lockId !== command.lockId || earlier.sentAt !== body.sentAt) {
        const first = `${earlier.token === command.token ? '' : `station ${earlier.token} `}lock ${earlier.lockId} sent at ${earlier.sentAt ?? '(none)'}`;
        const now = `${earlier.token === command.token ? '' : `station ${command.token} `}lock ${command.lockId} sent at ${body.sentAt ?? '(none)'}`;
        report('service.command-id-reused', `first for ${first}, now for ${now}: make a fresh id for every command`, commandId);
      }
      // The same command again is a QoS 1 redelivery, judged the first time.
      return;
    }
    this.#remember(command, body);
    // Interface: every command carries sentAt (docs/design.md, the topic contract; "a command carries
    // `sentAt`"), and nothing else: a field the firmware does not read is a command the backend
    // thinks says something it does not (`"action":"lock"` still unlocks).
    if (body.sentAt === undefined) report('service.bad-payload', 'no sentAt: every command carries one, so the station can refuse it once it is older than its TTL', commandId);
    else if (sentAtMs === undefined) report('service.bad-payload', `sentAt ${printableJson(body.sentAt)} is not ISO 8601 UTC`, commandId);
    const extra = extraFields(body);
    if (extra.length > 0) report('service.bad-payload', `fields the contract does not have: ${extra.map(printableJson).join(', ')}; a command is only {"commandId","sentAt"} and always unlocks`, commandId);
    this.#checkStorm(memory, command, (detail) => report('service.unlock-storm', detail, commandId));
    if (!command.locks.some((lock) => lock.lockId === command.lockId)) {
      report('service.unknown-lock', `the station has no lock ${command.lockId}: send commands only for the locks whose state it publishes`, commandId);
    }
    this.#checkTimes(command, sentAtMs, (rule, detail) => report(rule, detail, commandId));
  }

  /**
   * A retained command the broker still holds at stop, read by the fleet with a fresh subscription
   * (`StartedFleet.readRetainedCommands`). A command published retained while its station was
   * connected reached it live, with the flag cleared, so only a new subscription shows it; one
   * the station was already told of (on a reconnect) is not told again. True when it was judged.
   */
  observeRetainedAtStop(command: ReceivedCommand): boolean {
    if (!this.#enabled || this.#retainedTold.has(retainedKey(command))) return false;
    this.observe({ ...command, retain: true, heldAtStop: true });
    return true;
  }

  /**
   * A misdeed the embedded broker saw (`PublishedMisdeed`): judged by the rule it breaks. A retained
   * command told here is not told again when a station receives it on a subscription, or at stop.
   */
  observePublished(seen: PublishedMisdeed): void {
    if (!this.#enabled || seen.fromGateway) return;
    const where = { token: seen.token, lockId: seen.lockId ?? '', now: seen.now };
    const commandId = seen.command?.commandId;
    switch (seen.kind) {
      case 'unknown-station':
        this.#report(where, 'service.command-to-unknown-station', `published by client ${printableJson(seen.clientId)} to station ${printableJson(seen.token)}, which the fixture does not have: the broker delivered it to nobody`, commandId);
        return;
      case 'retained-command':
        // Clearing a retained message (an empty payload, MQTT 3.1.1, 3.3.1.3) is no command.
        if (seen.payload.length === 0 || !this.#tellRetained(retainedKey({ ...where, payload: seen.payload }), 'broker')) return;
        this.#report(
          where,
          'service.retained-command',
          `published retained by client ${printableJson(seen.clientId)}, seen by the broker: it keeps it and hands it to the station on every subscription (a live delivery clears the flag); clear it with an empty retained payload`,
          commandId,
        );
        return;
      case 'spoofed':
        this.#report(
          where,
          'service.spoofed-station-message',
          `client ${printableJson(seen.clientId)} published the station's ${SPOOFED_MESSAGE[seen.message]}${seen.lockId === undefined ? '' : ` of lock ${printableJson(seen.lockId)}`}; only the station may`,
          seen.message === 'acks' ? ackCommandId(seen.payload) : undefined,
        );
        return;
    }
  }

  /** Marks a retained command told; false when it must not be told (again). */
  #tellRetained(key: string, by: 'broker' | 'delivery'): boolean {
    const told = this.#retainedTold.get(key);
    // Each delivery on a subscription is told, as before; one the broker told at publication is not.
    if (told === 'broker' || (told === 'delivery' && by === 'broker')) return false;
    this.#retainedTold.set(key, by);
    if (this.#retainedTold.size > this.#maxRemembered) this.#retainedTold.delete(this.#retainedTold.keys().next().value as string);
    return true;
  }

  #remember(command: ReceivedCommand, body: UnlockCommand): void {
    this.#commands.set(body.commandId, { token: command.token, lockId: command.lockId, sentAt: body.sentAt });
    if (this.#commands.size > this.#maxRemembered) this.#commands.delete(this.#commands.keys().next().value as string);
  }

  /** `service.unlock-storm`: new commands (fresh ids) to one lock faster than a person could ask for them, told once per storm. */
  #checkStorm(memory: StationMemory, command: ReceivedCommand, report: (detail: string) => void): void {
    const rule = this.#settings['service.unlock-storm'];
    const max = rule?.maxCommands ?? 4;
    const windowMs = rule?.windowMs ?? 300;
    let lock = memory.locks.get(command.lockId);
    if (!lock) {
      // Only the locks a station has, and one entry for all others: bounded by the fleet.
      if (memory.locks.size >= MAX_LOCKS_PER_STATION) return;
      lock = { arrivals: [], told: false };
      memory.locks.set(command.lockId, lock);
    }
    lock.arrivals.push(command.now);
    if (lock.arrivals.length > max + 1) lock.arrivals.shift();
    while (lock.arrivals.length > 0 && lock.arrivals[0]! <= command.now - windowMs) lock.arrivals.shift();
    if (lock.arrivals.length <= max) {
      lock.told = false;
      return;
    }
    if (lock.told) return;
    lock.told = true;
    report(`${lock.arrivals.length} commands with fresh ids to lock ${command.lockId} within ${windowMs} ms; at most ${max} allowed: a retry reuses the command's id, and a retry loop waits for the ack`);
  }

  #report(command: Pick<ReceivedCommand, 'token' | 'lockId' | 'now'>, rule: JudgeRuleId, detail: string, commandId: string | undefined): void {
    if (this.#settings[rule]?.enabled === false) return;
    this.#onFinding({
      time: new Date(command.now).toISOString(),
      rule,
      token: command.token,
      // A misdeed on a station's status or acks topic names no lock.
      ...(command.lockId === '' ? {} : { lockId: command.lockId }),
      ...(commandId === undefined ? {} : { commandId }),
      detail,
    });
  }

  #checkTimes(command: ReceivedCommand, sentAtMs: number | undefined, report: (rule: JudgeRuleId, detail: string) => void): void {
    // Written only into a finding's detail: a command that breaks no rule writes no date.
    const stationTime = (): string => new Date(command.now).toISOString();
    if (sentAtMs !== undefined) {
      const age = command.now - sentAtMs;
      if (age > command.commandTtlMs) {
        report('service.stale-sent-at', `sent at ${new Date(sentAtMs).toISOString()}, ${age} ms before the station's ${stationTime()}; its TTL is ${command.commandTtlMs} ms${expiryNote(command)}`);
        return;
      }
      const futureSkew = this.#settings['service.future-sent-at']?.skewMs ?? 2000;
      if (-age > futureSkew) report('service.future-sent-at', `sent at ${new Date(sentAtMs).toISOString()}, ${-age} ms after the station's ${stationTime()}`);
    }
    if (!command.online) {
      report(
        'service.command-to-offline-station',
        command.undelivered
          ? `published at ${stationTime()} while the station was offline with a clean session: the broker delivered it to nobody, and the station will never see it`
          : `arrived at ${stationTime()} while the station was offline${expiryNote(command)}`,
      );
      return;
    }
    const offlineSkew = this.#settings['service.command-to-offline-station']?.skewMs ?? 2000;
    if (sentAtMs !== undefined && command.onlineSince !== undefined && sentAtMs < command.onlineSince - offlineSkew) {
      report(
        'service.command-to-offline-station',
        `sent at ${new Date(sentAtMs).toISOString()}, while the station's status said offline (online again at ${new Date(command.onlineSince).toISOString()})${expiryNote(command)}`,
      );
    }
  }

  #checkRate(memory: StationMemory, now: number, report: (detail: string) => void): void {
    const rule = this.#settings['service.command-rate'];
    const max = rule?.maxCommands ?? 10;
    const windowMs = rule?.windowMs ?? 1000;
    memory.arrivals.push(now);
    // Only the last max + 1 arrivals matter: the rate is broken when the oldest of them is inside the window.
    if (memory.arrivals.length > max + 1) memory.arrivals.shift();
    while (memory.arrivals.length > 0 && memory.arrivals[0]! <= now - windowMs) memory.arrivals.shift();
    if (memory.arrivals.length <= max) {
      memory.overRate = false;
      return;
    }
    if (memory.overRate) return;
    memory.overRate = true;
    report(`${memory.arrivals.length} commands within ${windowMs} ms; at most ${max} allowed`);
  }

  #memory(token: string): StationMemory {
    let memory = this.#stations.get(token);
    if (!memory) {
      memory = { arrivals: [], overRate: false, locks: new Map() };
      this.#stations.set(token, memory);
    }
    return memory;
  }
}

/** Locks a station's storm memory holds at most (a backend may name any lock id). */
const MAX_LOCKS_PER_STATION = 64;

/** The fields of a command beyond the contract's, at most 5, their names cut to 40 characters. */
function extraFields(body: UnlockCommand): string[] {
  const extra: string[] = [];
  for (const key in body) {
    if (key === 'commandId' || key === 'sentAt') continue;
    extra.push(key.slice(0, 40));
    if (extra.length >= 5) break;
  }
  return extra;
}

/** A value as JSON with its control characters escaped, at most 80 characters: safe in a line of evidence. */
function printableJson(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return (text.length > 80 ? `${text.slice(0, 79)}…` : text).replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** What a spoofed message is, in a finding's words. */
const SPOOFED_MESSAGE: Record<PublishedMisdeed['message'], string> = { status: 'status', lockState: 'lock state', acks: 'ack', unlock: 'command' };

/** The command id of an ack's payload, when it has one. */
function ackCommandId(payload: Buffer): string | undefined {
  try {
    const body = JSON.parse(payload.toString()) as unknown;
    const id = typeof body === 'object' && body !== null ? (body as { commandId?: unknown }).commandId : undefined;
    return typeof id === 'string' ? id : undefined;
  } catch {
    return undefined;
  }
}

function retainedKey(command: Pick<ReceivedCommand, 'token' | 'lockId' | 'payload'>): string {
  return `${command.token}\n${command.lockId}\n${command.payload.toString('latin1')}`;
}

/** Why a payload is not a command, in a few words; never the payload itself (it could hold anything). */
function describeBadPayload(payload: Buffer): string {
  if (payload.length > PLAUSIBILITY_LIMITS.maxPayloadBytes) return `${payload.length} bytes, over the ${PLAUSIBILITY_LIMITS.maxPayloadBytes} a command may have`;
  try {
    JSON.parse(payload.toString());
  } catch {
    return `${payload.length} bytes that are not JSON, starting ${printableJson(payload.subarray(0, 32).toString('latin1'))}`;
  }
  return 'JSON, but not {"commandId": string, "sentAt": string}: publish exactly the contract\'s two fields';
}

/**
 * For the findings about a command that waited (stale, sent to an offline station): over MQTT 5,
 * what its Message Expiry Interval said (MQTT 5.0, section 3.3.2.3.3), since an expiry no longer than
 * the station's TTL lets the broker drop such a command itself. Nothing at MQTT 3.1.1, which has none.
 */
function expiryNote(command: ReceivedCommand): string {
  if (command.properties === undefined) return '';
  const left = command.properties.messageExpiryInterval;
  if (left === undefined) return '; it came over MQTT 5 with no message expiry, so a broker keeps it for as long as the session lasts (set one no longer than the TTL: MQTT 5.0, 3.3.2.3.3)';
  return `; it came over MQTT 5 with ${left} s of message expiry left`;
}
