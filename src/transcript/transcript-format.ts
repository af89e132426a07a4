/**
 * The transcript file: JSON lines, one entry per MQTT message of the contract and per API request,
 * with the time and, where there is one, the command id that links an unlock request to its MQTT
 * command, ack and the lock states that follow. Never a bearer token or a password: API entries
 * carry the route pattern, not the URL, with the station and lock it names (a station's token is
 * its id, e.g. `CI-1`) and the outcome, and no headers or bodies.
 *
 * Files written before an entry field was added still read: `message` (which contract message an
 * MQTT entry is), the `commandId`/`lockId` of `sim` entries, and the fields of `api` and `judge`
 * entries beyond the few every file has (`method`, `route`, `status`; `rule`, `detail`) are
 * optional, and a reader falls back to what older recorders wrote when they are missing.
 */
import { Type, type Static, type TProperties, type TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { isEntryKind, type EntryKind } from './entry-kinds.js';
import { ApiRequestEventSchema, JudgeFindingEventSchema } from '../control/wire-schemas.js';

/** An ISO 8601 UTC time as `Date.prototype.toISOString` writes it. */
const TimeSchema = Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d+)?Z$' });

/** What a station saw of a command it received (see `MqttEntrySchema.delivery`). */
export const DeliverySchema = Type.Object({
  /** The QoS of the delivery: a command published at QoS 0 reaches the station's QoS 1 subscription at 0. */
  qos: Type.Union([Type.Literal(0), Type.Literal(1)]),
  /** Set when the broker sent it as a retained message (on a subscription). */
  retain: Type.Boolean(),
  /** Whether the station's model was online when it arrived. */
  online: Type.Boolean(),
  /** When the station's current session went online; absent while it has none. */
  onlineSince: Type.Optional(TimeSchema),
  /** The station's command TTL. */
  commandTtlMs: Type.Integer({ minimum: 0 }),
  /** Whether the station has the lock the topic names. */
  knownLock: Type.Boolean(),
  /** Published by station-sim's own `/v1` gateway in the recording process (no service rule judges it). */
  gateway: Type.Optional(Type.Boolean()),
  /** A retained command the broker still held at stop, read with a fresh subscription, not delivered to the station. */
  heldAtStop: Type.Optional(Type.Boolean()),
  /** Published to a station that was offline with a clean session: seen by the fleet's agent, delivered to nobody. */
  undelivered: Type.Optional(Type.Boolean()),
  /** The payload exactly as it arrived, base64, when `payload` cannot give it back byte for byte (not JSON, or JSON written otherwise). */
  raw: Type.Optional(Type.String()),
  /**
   * Over MQTT 5, the PUBLISH properties the command came with (MQTT 5.0, 3.3.2.3): the Message
   * Expiry Interval left when the broker sent it, User Properties, Response Topic, and Correlation
   * Data in base64. Absent at 3.1.1 and in older files.
   */
  properties: Type.Optional(
    Type.Object({
      messageExpiryInterval: Type.Optional(Type.Integer({ minimum: 0 })),
      userProperties: Type.Optional(Type.Record(Type.String(), Type.Union([Type.String(), Type.Array(Type.String())]))),
      responseTopic: Type.Optional(Type.String()),
      correlationData: Type.Optional(Type.String()),
    }),
  ),
});
export type Delivery = Static<typeof DeliverySchema>;

/** What the embedded broker saw of a misdeed's PUBLISH (see `MqttEntrySchema.published`). */
export const PublishedSchema = Type.Object({
  /** A command to a station the fixture does not have, a command published retained, or a station's message published by another client. */
  misdeed: Type.Union([Type.Literal('unknown-station'), Type.Literal('retained-command'), Type.Literal('spoofed')]),
  /** The publisher's client id. */
  clientId: Type.String(),
  retain: Type.Boolean(),
  /** Published by station-sim's own `/v1` gateway in the recording process. */
  gateway: Type.Optional(Type.Boolean()),
  /** The payload exactly as published, base64, when `payload` cannot give it back byte for byte. */
  raw: Type.Optional(Type.String()),
});
export type Published = Static<typeof PublishedSchema>;

/**
 * The fields of an entry recorded from an event of the stream, taken from the event's schema
 * (src/control/wire-schemas.ts) so that a field added to the event cannot be missing here: all but
 * `type` and `time` (the entry's `t`), with the station's `token` named `station`, as in every other
 * kind of entry. Each is optional, since a file written before the event had a field lacks it; the
 * entry requires again the few that every file has.
 */
function eventFields<P extends TProperties, S extends TSchema>({ type: _type, time: _time, token, ...fields }: P & { type: TSchema; time: TSchema; token: S }) {
  return Type.Partial(Type.Object({ ...fields, station: token }));
}

// The entry schemas leave `additionalProperties` open on purpose: a reader must still show a file
// written by a newer recorder that adds a field, and every field it prints is checked here.
export const MqttEntrySchema = Type.Object({
  t: TimeSchema,
  kind: Type.Literal('mqtt'),
  /** `down`: service → station (commands); `up`: station → everyone. */
  direction: Type.Union([Type.Literal('up'), Type.Literal('down')]),
  station: Type.String(),
  lockId: Type.Optional(Type.String()),
  topic: Type.String(),
  /** Which message of the contract this is, whatever the fixture's topic templates. Absent in older files. */
  message: Type.Optional(Type.Union([Type.Literal('status'), Type.Literal('lockState'), Type.Literal('unlock'), Type.Literal('acks')])),
  /** The parsed JSON payload, or the payload's text when it was not JSON. */
  payload: Type.Unknown(),
  commandId: Type.Optional(Type.String()),
  /**
   * On an unlock entry recorded where the station received it (its fleet ran in the recording
   * process): what MQTT said of the delivery and what the station knew, so that
   * `station-sim transcript judge` can judge the command again (src/judge/service-judge.ts,
   * `ReceivedCommand`). Absent in older files, and on commands to stations of another process,
   * whose unlock entries are the broker's view.
   */
  delivery: Type.Optional(DeliverySchema),
  /**
   * On an entry the embedded broker passed on as a misdeed (src/broker/station-watch.ts; docs/judge.md,
   * "What the broker sees"): what it was, who published it and with which retain flag, for
   * `station-sim transcript judge`. Recorded only for misdeeds; absent in older files.
   */
  published: Type.Optional(PublishedSchema),
});
/**
 * A `/v1` request, from its `api.request` event. `ms` is left out under a manual clock, where it is
 * the one thing that would differ between two runs of the same fixture and seed (docs/fixtures.md,
 * "Reproducible runs").
 */
export const ApiEntrySchema = Type.Object({
  ...eventFields(ApiRequestEventSchema.properties).properties,
  t: TimeSchema,
  kind: Type.Literal('api'),
  method: ApiRequestEventSchema.properties.method,
  route: ApiRequestEventSchema.properties.route,
  status: ApiRequestEventSchema.properties.status,
});
export const SimEntrySchema = Type.Object({
  t: TimeSchema,
  kind: Type.Literal('sim'),
  event: Type.String(),
  /** Absent for a fleet-wide control action. */
  station: Type.Optional(Type.String()),
  detail: Type.String(),
  lockId: Type.Optional(Type.String()),
  /** The command a fault or timeout is about. Absent in older files, which have it only in `detail`. */
  commandId: Type.Optional(Type.String()),
  /**
   * On the `judge-settings` entry a recording starts with: the fixture's `judge` section the run was judged
   * by, for `station-sim transcript judge` (checked there against the fixture schema).
   */
  settings: Type.Optional(Type.Unknown()),
  /** On the `mqtt-version` entry an MQTT 5 recording starts with: the protocol level (a file without it is MQTT 3.1.1). */
  protocolVersion: Type.Optional(Type.Union([Type.Literal(4), Type.Literal(5)])),
});
/**
 * A finding of the judge (docs/judge.md), from its `judge.finding` event. The fields beyond `rule`
 * and `detail` are the evidence a rule has: a service rule names the station and the command, a
 * client rule may name the account or the request instead.
 */
export const JudgeEntrySchema = Type.Object({
  ...eventFields(JudgeFindingEventSchema.properties).properties,
  t: TimeSchema,
  kind: Type.Literal('judge'),
  // Read as any text: a file of another version may name a rule or a party this one does not know.
  rule: Type.String(),
  party: Type.Optional(Type.String()),
  detail: JudgeFindingEventSchema.properties.detail,
});
/**
 * A `/v1` request as the client judge saw it (src/judge/client-judge.ts, `ClientObservation`), for
 * `station-sim transcript judge` to judge the client rules again. Never a token: `token` is an alias
 * the recording gives each access token in the order they first appear (`t1`, `t2` …), so requests
 * with the same token can be linked and nothing else. `transcript show` lists these entries only
 * when `--kind client` asks for them: the `api` entry of the same request says it for people.
 */
export const ClientEntrySchema = Type.Object({
  t: TimeSchema,
  kind: Type.Literal('client'),
  requestId: Type.String(),
  arrival: Type.Integer(),
  arrivalsAtAnswer: Type.Integer(),
  /**
   * When the request arrived, ISO 8601 on the simulator's clock like `t` (so a run under a manual
   * clock replays byte for byte once its start is taken out); absent in older files, which are
   * judged by arrival order alone.
   */
  receivedAt: Type.Optional(TimeSchema),
  method: Type.String(),
  route: Type.Optional(Type.String()),
  status: Type.Integer(),
  client: Type.String(),
  account: Type.Optional(Type.String()),
  token: Type.Optional(Type.String()),
  refreshToken: Type.Optional(Type.Union([Type.Literal('rotated'), Type.Literal('reused')])),
  queryToken: Type.Optional(Type.Union([Type.Object({ parameter: Type.String() }), Type.Object({ shape: Type.Union([Type.Literal('jwt'), Type.Literal('refresh-token'), Type.Literal('bearer')]) })])),
  station: Type.Optional(Type.String()),
  lockId: Type.Optional(Type.String()),
  stationStatus: Type.Optional(Type.String()),
});
export const TranscriptEntrySchema = Type.Union([MqttEntrySchema, ApiEntrySchema, SimEntrySchema, JudgeEntrySchema, ClientEntrySchema]);
export type TranscriptEntry = Static<typeof TranscriptEntrySchema>;
export type MqttEntry = Static<typeof MqttEntrySchema>;
export type JudgeEntry = Static<typeof JudgeEntrySchema>;
export type ClientEntry = Static<typeof ClientEntrySchema>;
export type SimEntry = Static<typeof SimEntrySchema>;

const entryChecker = TypeCompiler.Compile(TranscriptEntrySchema);

/** One line of a transcript file as an entry, or undefined when it is not an entry of the right shape. */
export function parseEntry(line: string): TranscriptEntry | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (!entryChecker.Check(value)) return undefined;
  // The pattern admits impossible dates such as month 13.
  return Number.isNaN(Date.parse(value.t)) ? undefined : value;
}

/**
 * The bytes an MQTT entry's payload stands for, when the entry has no `raw`: its text, or its JSON
 * serialised. The recorder keeps `raw` exactly when this would not give the bytes back.
 */
export function payloadBytes(payload: unknown): Buffer {
  return Buffer.from(typeof payload === 'string' ? payload : JSON.stringify(payload));
}

/** The command id a `sim` entry is about: the field, or for older files the `command ID` words of its detail. */
function simCommandId(entry: Static<typeof SimEntrySchema>): string | undefined {
  if (entry.commandId !== undefined || (entry.event !== 'fault' && entry.event !== 'timeout')) return entry.commandId;
  // Older recorders wrote "<fault> [lock L] command ID" and "no ack for command ID after N ms".
  return /(?:^|\s)command (\S+)(?:\s|$)/.exec(entry.detail)?.[1];
}

/** The command id an entry carries or is about, if any (older `sim` entries: from their detail). */
export function entryCommandId(entry: TranscriptEntry): string | undefined {
  if (entry.kind === 'client') return undefined;
  return entry.kind === 'sim' ? simCommandId(entry) : entry.commandId;
}

/** A lock state message; older files did not record the message kind, and the default template ends in `/state`. */
function isLockState(entry: MqttEntry): boolean {
  return entry.message !== undefined ? entry.message === 'lockState' : entry.direction === 'up' && entry.topic.endsWith('/state');
}

/**
 * Collects one command's chain from entries fed in file order, keeping only the chain: the API
 * request, the command (and any redelivered copy), its acks, the faults and timeout about it, and
 * the state changes of that lock after the command up to the next, different command for the
 * same lock.
 */
export class CommandChain {
  readonly #commandId: string;
  readonly #entries: TranscriptEntry[] = [];
  #command: MqttEntry | undefined;
  /** True once the next, different command for the same lock has been seen. */
  #closed = false;

  constructor(commandId: string) {
    this.#commandId = commandId;
  }

  add(entry: TranscriptEntry): void {
    if (entryCommandId(entry) === this.#commandId) {
      if (!this.#command && entry.kind === 'mqtt' && entry.direction === 'down') this.#command = entry;
      this.#entries.push(entry);
      return;
    }
    const command = this.#command;
    if (!command || this.#closed || entry.kind !== 'mqtt' || entry.station !== command.station || entry.lockId !== command.lockId) return;
    if (entry.direction === 'down') this.#closed = true;
    else if (isLockState(entry)) this.#entries.push(entry);
  }

  /** The chain so far, in file order. */
  get entries(): readonly TranscriptEntry[] {
    return this.#entries;
  }
}

/** The entries of one command's chain (see {@link CommandChain}). */
export function commandChain(entries: Iterable<TranscriptEntry>, commandId: string): TranscriptEntry[] {
  const chain = new CommandChain(commandId);
  for (const entry of entries) chain.add(entry);
  return [...chain.entries];
}

/**
 * Text safe to print to a terminal: C0 controls (newline and tab included), DEL and C1 controls
 * (ESC and CSI among them) become `\u00XX`, so a station name or topic chosen by any client of
 * the broker cannot move the cursor, clear the screen or set the window title.
 */
export function printable(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** One readable line for an entry, with its time since `origin` (milliseconds since the epoch). */
export function formatEntry(entry: TranscriptEntry, origin: number): string {
  const offset = `+${((Date.parse(entry.t) - origin) / 1000).toFixed(3)}s`.padStart(10);
  switch (entry.kind) {
    case 'api': {
      const where = entry.station ? `  ${entry.station}${entry.lockId ? `/${entry.lockId}` : ''}` : '';
      const outcome = entry.outcome ? ` ${entry.outcome}` : '';
      const ms = entry.ms !== undefined ? ` (${entry.ms} ms)` : '';
      const fault = entry.fault ? ` by fault ${entry.fault}` : '';
      return `${offset}  API   ${printable(`${entry.method} ${entry.route}${where} → ${entry.status}${fault}${outcome}${ms}`)}${entry.commandId ? `  [${printable(entry.commandId)}]` : ''}`;
    }
    case 'sim':
      return `${offset}  SIM   ${printable(`${entry.event}${entry.station ? ` ${entry.station}` : ''}: ${entry.detail}`)}`;
    case 'mqtt': {
      const arrow = entry.direction === 'down' ? '→' : '←';
      const where = `${entry.station}${entry.lockId ? `/${entry.lockId}` : ''}`;
      const notes = entry.published ? describePublished(entry.published) : entry.delivery ? describeDelivery(entry.delivery) : '';
      const delivery = notes ? `  ${notes}` : '';
      // JSON.stringify escapes C0 controls but leaves DEL and C1 as they are.
      return `${offset}  MQTT  ${arrow} ${printable(where)}  ${printable(entry.topic)}  ${printable(JSON.stringify(entry.payload))}${delivery}`;
    }
    case 'judge':
      return `${offset}  JUDGE ${printable(describeJudgeEntry(entry))}`;
    case 'client': {
      const facts = [
        `client ${entry.client}`,
        entry.account !== undefined ? `account ${entry.account}` : '',
        entry.token !== undefined ? `token ${entry.token}` : '',
        entry.refreshToken !== undefined ? `refresh token ${entry.refreshToken}` : '',
        entry.queryToken !== undefined ? 'token in query' : '',
        entry.stationStatus !== undefined ? `station ${entry.stationStatus}` : '',
      ].filter(Boolean);
      return `${offset}  CLIENT ${printable(`${entry.method} ${entry.route ?? '(no route)'} → ${entry.status}  ${facts.join('  ')}  request ${entry.requestId}`)}`;
    }
  }
}

/** What a station saw of a delivery, only where it is not the contract's ordinary case (QoS 1, live, online). */
function describeDelivery(delivery: Delivery): string {
  const notes = [delivery.qos === 0 ? 'QoS 0' : '', delivery.retain ? 'retained' : '', delivery.online ? '' : 'station offline'].filter(Boolean);
  return notes.length > 0 ? `(${notes.join(', ')})` : '';
}

/** What the broker saw of a misdeed's PUBLISH. */
function describePublished(published: Published): string {
  const what = published.misdeed === 'unknown-station' ? 'to no station' : published.misdeed === 'retained-command' ? 'retained' : 'not by the station';
  return `(published ${what}, by client ${JSON.stringify(published.clientId)})`;
}

/** `rule  station/lock  command C  account A  request R: detail`, with only the evidence the finding has. */
export function describeJudgeEntry(entry: JudgeEntry): string {
  const where = entry.station !== undefined ? `${entry.station}${entry.lockId ? `/${entry.lockId}` : ''}` : entry.lockId !== undefined ? `lock ${entry.lockId}` : '';
  const evidence = [
    where,
    entry.commandId !== undefined ? `command ${entry.commandId}` : '',
    entry.account !== undefined ? `account ${entry.account}` : '',
    entry.requestId !== undefined ? `request ${entry.requestId}` : '',
  ].filter(Boolean);
  return `${entry.rule}${evidence.length > 0 ? `  ${evidence.join('  ')}` : ''}: ${entry.detail}`;
}

/** One readable line per entry, with the time since the first entry shown. */
export function formatTimeline(entries: readonly TranscriptEntry[]): string[] {
  const origin = entries.length > 0 ? Date.parse(entries[0]!.t) : 0;
  return entries.map((entry) => formatEntry(entry, origin));
}

/** True when `entry` is of one of `kinds`: its kind, its MQTT message or its `sim` event. */
export function entryHasKind(entry: TranscriptEntry, kinds: ReadonlySet<EntryKind>): boolean {
  if (kinds.has(entry.kind)) return true;
  if (entry.kind === 'mqtt') {
    const message = messageOf(entry);
    return message !== undefined && kinds.has(message);
  }
  return entry.kind === 'sim' && isEntryKind(entry.event) && kinds.has(entry.event);
}

/**
 * Which contract message an MQTT entry is. Older files did not record it: there it is read from
 * the direction and the default topic templates' last level, and is unknown for other templates.
 */
function messageOf(entry: MqttEntry): MqttEntry['message'] {
  if (entry.message !== undefined) return entry.message;
  if (entry.direction === 'down') return 'unlock';
  const last = entry.topic.slice(entry.topic.lastIndexOf('/') + 1);
  return last === 'state' ? 'lockState' : last === 'acks' || last === 'status' ? last : undefined;
}

/**
 * True when `entry` is about one of `stations`. A `sim` entry with no station (a reset, a clock
 * advance) concerns every station and is kept; an API entry with none (a login), or a finding of
 * the judge with none (about an account), is not.
 */
export function entryIsAbout(entry: TranscriptEntry, stations: ReadonlySet<string>): boolean {
  if (entry.station === undefined) return entry.kind === 'sim';
  return stations.has(entry.station);
}
