/**
 * Writes a transcript (`--record FILE`) from what the event hub sees: every contract message that
 * crosses the broker and every API request summary. Appends as it goes, so a CI run that is killed
 * still leaves everything up to that moment.
 */
import { channel } from 'node:diagnostics_channel';
import { createWriteStream, type WriteStream } from 'node:fs';
import type { ContractMessage, EventHub, SimStreamEvent } from '../control/event-hub.js';
import type { Clock } from '../shared/clock.js';
import type { StationConfig } from '../fixture/fixture-schema.js';
import type { JudgeSettings } from '../fixture/judge-schema.js';
import type { PublishedMisdeed, ReceivedCommand } from '../judge/service-judge.js';
import type { PublishProperties } from '../mqtt/lean-client/index.js';
import type { ClientObservation } from '../judge/client-judge.js';
import { groupTopics, type StationTopics } from '../contract/topics.js';
import { payloadBytes, type ClientEntry, type Delivery, type Published, type TranscriptEntry } from './transcript-format.js';
import { SimError } from '../errors.js';
import { openProblem } from '../shared/open-problem.js';
import { TRANSCRIPT_CLOSED_CHANNEL } from '../shared/diagnostics-channels.js';

export interface TranscriptOptions {
  /** The JSON-lines file to write; replaced if it exists. */
  path: string;
  hub: EventHub;
  /**
   * Simulated time, for the entries' `t`. Under a manual clock (`manual: true`, as the simulator's
   * clock says) the API entries leave out `ms`, the request's duration in real time: the file is
   * then the same, byte for byte, on every run of the same fixture and seed.
   */
  clock: Clock & { readonly manual?: boolean };
  /**
   * Told, in one line naming the file and the error, when the transcript cannot be written (a
   * full disk, say). Recording stops at the first such error: the file then ends there.
   * @default a process warning (`process.emitWarning`), so the failure is never silent
   */
  onNotice?: (message: string) => void;
  /**
   * How far the file may fall behind before recording stops (with a notice, as for a write
   * error): a disk or pipe slower than the simulator would otherwise hold every entry in memory.
   * @default 67108864 (64 MiB)
   */
  maxPendingBytes?: number;
  /**
   * The stations whose fleet runs in this process. Their unlock entries are written when the
   * station receives the command (`recordCommand`), with what it saw of the delivery, for
   * `station-sim transcript judge`; the broker's copy of the publication is then left out. Commands
   * to other stations are recorded as the broker routes them. @default none
   */
  fleetStations?: readonly Pick<StationConfig, 'token' | 'behaviour'>[];
  /**
   * The MQTT protocol level of the run. At 5 the file starts with a `sim` entry `mqtt-version`
   * (`protocolVersion: 5`); a file without it is MQTT 3.1.1.
   * @default 4
   */
  protocolVersion?: 4 | 5;
  /**
   * The fixture's `judge` section, written first (a `sim` entry `judge-settings`), so the run can
   * be judged again offline with the same thresholds. @default not written
   */
  judge?: JudgeSettings;
  /**
   * Set when the embedded broker watches the station topics for the judge (docs/judge.md, "What the
   * broker sees"): a command to a station not among `fixtureTokens` is then recorded from the
   * watch (`recordPublished`), with who published it, and the broker's copy of it is left out.
   * @default no watch
   */
  brokerWatch?: { fixtureTokens: readonly string[] };
}

export interface StartedTranscript {
  readonly path: string;
  /**
   * Records a command a station of `fleetStations` received (give it to the fleet's `onCommand`).
   * This, `recordPublished` and `recordClientRequest` are function properties: they are handed on detached.
   */
  recordCommand: (command: ReceivedCommand) => void;
  /** Records a misdeed the embedded broker saw (give it to the fleet's `onPublished`). */
  recordPublished: (seen: PublishedMisdeed) => void;
  /** Records a `/v1` request as the client judge saw it (a `client` entry; the token fingerprint becomes an alias). */
  recordClientRequest: (observation: ClientObservation) => void;
  stop(): Promise<void>;
}

/**
 * Every transcript, once its file is closed, is published on a diagnostics channel
 * (`TRANSCRIPT_CLOSED_CHANNEL`, `node:diagnostics_channel`): the project's own suite judges each
 * one again offline and holds the verdict to the live one. Nothing is built when nobody subscribes.
 */
const closedChannel = channel(TRANSCRIPT_CLOSED_CHANNEL);

/** What the channel carries: the file, and whether recording ran to the end (false after a write error or overflow). */
export interface ClosedTranscript {
  path: string;
  complete: boolean;
}

export async function startTranscript(options: TranscriptOptions): Promise<StartedTranscript> {
  const out = await openTranscriptFile(options.path);
  const notify = options.onNotice ?? ((message: string) => process.emitWarning(message, 'TranscriptWarning'));
  const maxPending = options.maxPendingBytes ?? 64 * 1024 * 1024;
  let recording = true;
  const stopRecording = (why: string): void => {
    if (!recording) return;
    recording = false;
    stopMessages();
    stopEvents();
    notify(`transcript ${options.path} ${why}; recording stopped, the file ends before this point`);
  };
  const write = (entry: TranscriptEntry): void => {
    if (!recording) return;
    out.write(`${JSON.stringify(entry)}\n`);
    if (out.writableLength > maxPending) stopRecording(`fell more than ${formatMiB(maxPending)} behind (the disk or pipe is slower than the simulator)`);
  };
  const fixtureTokens = options.brokerWatch ? new Set(options.brokerWatch.fixtureTokens) : undefined;
  const delivered = groupTopics((options.fleetStations ?? []).map((station) => ({ token: station.token, behaviour: station.behaviour }))).byToken;
  for (const entry of headerEntries(options)) write(entry);
  const stopMessages = options.hub.onContractMessage((message) => {
    // The station's own view of its commands is recorded instead (recordCommand), and the broker's
    // watch's of a command to no station (recordPublished).
    if (message.kind === 'unlock' && (delivered.has(message.token) || (fixtureTokens !== undefined && !fixtureTokens.has(message.token)))) return;
    const entry = mqttEntry(message, new Date(options.clock.now()).toISOString());
    if (entry) write(entry);
  });
  const realDurations = options.clock.manual !== true;
  const stopEvents = options.hub.subscribe((event) => {
    const entry = eventEntry(event, realDurations);
    if (entry) write(entry);
  });
  // The stream destroys itself on a write error; whatever is still queued is lost.
  out.once('error', (error) => stopRecording(`could not be written (${error.message})`));
  let stopped: Promise<void> | undefined;
  let ended = false;
  // Access tokens by the order they first appear: a run replays to the same aliases, and the file
  // holds nothing derived from a token's bytes (the fingerprint's key dies with the process).
  // At most ALIASES_KEPT are remembered, the oldest forgotten first (the client judge forgets as much).
  const aliases = new Map<string, string>();
  let lastAlias = 0;
  const tokenAlias = (fingerprint: string): string => {
    let alias = aliases.get(fingerprint);
    if (alias === undefined) {
      alias = `t${++lastAlias}`;
      aliases.set(fingerprint, alias);
      if (aliases.size > ALIASES_KEPT) aliases.delete(aliases.keys().next().value as string);
    }
    return alias;
  };
  return {
    path: options.path,
    recordClientRequest: (observation) => {
      if (ended) return;
      write(clientEntry(observation, tokenAlias));
    },
    recordCommand: (command) => {
      if (ended) return;
      const topics = delivered.get(command.token);
      if (topics) write(deliveryEntry(command, topics));
    },
    recordPublished: (seen) => {
      if (!ended) write(publishedEntry(seen));
    },
    stop: () =>
      (stopped ??= new Promise<void>((resolve) => {
        // A command a station still receives while the simulator stops is not written after the end.
        ended = true;
        stopMessages();
        stopEvents();
        const closed = (): void => {
          if (closedChannel.hasSubscribers) closedChannel.publish({ path: options.path, complete: recording } satisfies ClosedTranscript);
          resolve();
        };
        if (out.destroyed) return closed();
        // 'close' follows both a clean end and a failed last write (already reported above).
        out.once('close', closed);
        out.end();
      })),
  };
}

/** The entries a transcript starts with: its MQTT protocol level when not 3.1.1, and the judge's settings. */
function headerEntries(options: Pick<TranscriptOptions, 'clock' | 'protocolVersion' | 'judge'>): TranscriptEntry[] {
  const t = new Date(options.clock.now()).toISOString();
  const entries: TranscriptEntry[] = [];
  // The protocol level, where it is not MQTT 3.1.1 (a transcript without this entry is 3.1.1): the
  // unlock entries of an MQTT 5 run carry their PUBLISH properties (`delivery.properties`).
  if (options.protocolVersion === 5) entries.push({ t, kind: 'sim', event: 'mqtt-version', detail: 'MQTT 5.0 (protocol level 5)', protocolVersion: 5 });
  if (options.judge !== undefined) {
    const rules = options.judge.rules ?? {};
    const detail = Object.keys(rules).length === 0 ? 'every rule on, default thresholds' : `rules ${JSON.stringify(rules)}`;
    entries.push({ t, kind: 'sim', event: 'judge-settings', detail, settings: options.judge });
  }
  return entries;
}

/** The file at `path`, opened (replaced if it exists); a file that cannot be opened is a BAD_REQUEST saying why. */
async function openTranscriptFile(path: string): Promise<WriteStream> {
  const out: WriteStream = createWriteStream(path, { flags: 'w' });
  await new Promise<void>((resolve, reject) => {
    const opened = (): void => {
      out.off('error', failed);
      resolve();
    };
    const failed = (error: NodeJS.ErrnoException): void => {
      out.off('open', opened);
      const why = openProblem(error);
      reject(new SimError('BAD_REQUEST', `cannot record the transcript to ${path}: ${why}`, { cause: error }));
    };
    out.once('open', opened);
    out.once('error', failed);
  });
  return out;
}

/** The entry of a contract message that crossed the broker at `t`. */
function mqttEntry(message: ContractMessage, t: string): TranscriptEntry | undefined {
  if (message.kind === 'simEvent') return undefined; // recorded from the hub's fault events (eventEntry)
  let payload: unknown = message.payload;
  try {
    payload = JSON.parse(message.payload);
  } catch {
    // A malformed payload is recorded as the text it was: that may be the bug being hunted.
  }
  const commandId = typeof payload === 'object' && payload !== null && 'commandId' in payload ? String(payload.commandId) : undefined;
  return {
    t,
    kind: 'mqtt',
    direction: message.kind === 'unlock' ? 'down' : 'up',
    station: message.token,
    ...(message.lockId !== undefined ? { lockId: message.lockId } : message.kind === 'acks' && commandId ? { lockId: String((payload as { lockId?: unknown }).lockId ?? '') } : {}),
    topic: message.topic,
    // Readers find lock states by this, not by the topic, which a fixture may shape freely.
    message: message.kind,
    payload,
    ...(commandId ? { commandId } : {}),
  };
}

/** MQTT 5 properties as a transcript holds them: Correlation Data (bytes) in base64. */
function propertiesEntry(properties: PublishProperties): NonNullable<Delivery['properties']> {
  const { correlationData, ...rest } = properties;
  return correlationData === undefined ? rest : { ...rest, correlationData: correlationData.toString('base64') };
}

/** The unlock entry of a command as its station received it. */
function deliveryEntry(command: ReceivedCommand, topics: StationTopics): TranscriptEntry {
  const payload = recordedPayload(command.payload);
  const delivery: Delivery = {
    qos: command.qos,
    retain: command.retain,
    online: command.online,
    ...(command.onlineSince === undefined ? {} : { onlineSince: new Date(command.onlineSince).toISOString() }),
    commandTtlMs: command.commandTtlMs,
    knownLock: command.locks.some((lock) => lock.lockId === command.lockId),
    ...(command.fromGateway ? { gateway: true } : {}),
    ...(command.heldAtStop ? { heldAtStop: true } : {}),
    ...(command.undelivered ? { undelivered: true } : {}),
    ...(payloadBytes(payload).equals(command.payload) ? {} : { raw: command.payload.toString('base64') }),
    ...(command.properties === undefined ? {} : { properties: propertiesEntry(command.properties) }),
  };
  const commandId = command.command?.commandId;
  return {
    t: new Date(command.now).toISOString(),
    kind: 'mqtt',
    direction: 'down',
    station: command.token,
    lockId: command.lockId,
    topic: topics.topic('unlock', { token: command.token, lockId: command.lockId }),
    message: 'unlock',
    payload,
    ...(commandId === undefined ? {} : { commandId }),
    delivery,
  };
}

/** The entry of a misdeed the embedded broker saw, as it was published. */
function publishedEntry(seen: PublishedMisdeed): TranscriptEntry {
  const payload = recordedPayload(seen.payload);
  const published: Published = {
    misdeed: seen.kind,
    clientId: seen.clientId,
    retain: seen.retain,
    ...(seen.fromGateway ? { gateway: true } : {}),
    ...(payloadBytes(payload).equals(seen.payload) ? {} : { raw: seen.payload.toString('base64') }),
  };
  const commandId = seen.message === 'unlock' ? seen.command?.commandId : typeof payload === 'object' && payload !== null && typeof (payload as { commandId?: unknown }).commandId === 'string' ? (payload as { commandId: string }).commandId : undefined;
  return {
    t: new Date(seen.now).toISOString(),
    kind: 'mqtt',
    direction: seen.message === 'unlock' ? 'down' : 'up',
    station: seen.token,
    ...(seen.lockId === undefined ? {} : { lockId: seen.lockId }),
    topic: seen.topic,
    message: seen.message,
    payload,
    ...(commandId === undefined ? {} : { commandId }),
    published,
  };
}

/**
 * A payload as an entry holds it: its JSON, else its text. The entry keeps the bytes themselves
 * (`raw`) as well when `payloadBytes` would not give them back from it.
 */
function recordedPayload(bytes: Buffer): unknown {
  const text = bytes.toString();
  try {
    return JSON.parse(text);
  } catch {
    // Not JSON: recorded as its text, as the broker's copy is.
    return text;
  }
}

/**
 * The entry of an event of the hub's stream, for the kinds a transcript records; `realDurations`
 * false leaves out what was measured in real time.
 */
function eventEntry(event: SimStreamEvent, realDurations: boolean): TranscriptEntry | undefined {
  switch (event.type) {
    case 'api.request':
      return apiEntry(event, realDurations);
    case 'fault.applied':
      return {
        t: event.time,
        kind: 'sim',
        event: 'fault',
        station: event.token,
        detail: `${event.fault}${event.lockId ? ` lock ${event.lockId}` : ''}${event.commandId ? ` command ${event.commandId}` : ''}`,
        ...(event.lockId ? { lockId: event.lockId } : {}),
        ...(event.commandId ? { commandId: event.commandId } : {}),
      };
    case 'control':
      return { t: event.time, kind: 'sim', event: 'control', ...(event.token ? { station: event.token } : {}), detail: event.action };
    case 'command.timeout':
      return {
        t: event.time,
        kind: 'sim',
        event: 'timeout',
        station: event.token,
        detail: `no ack for command ${event.commandId} after ${event.ms} ms`,
        lockId: event.lockId,
        commandId: event.commandId,
      };
    case 'judge.finding': {
      // Every field of the finding is evidence (docs/judge.md): the station's token is its id, never a credential.
      const { type: _type, time, token, ...finding } = event;
      return { t: time, kind: 'judge', ...(token === undefined ? {} : { station: token }), ...finding };
    }
    default:
      return undefined;
  }
}

type ApiRequestEvent = Extract<SimStreamEvent, { type: 'api.request' }>;
/** The fields of `api.request` that `apiEntry` copies. */
type CopiedApiFields = 'type' | 'time' | 'method' | 'route' | 'status' | 'ms' | 'token' | 'lockId' | 'outcome' | 'commandId' | 'fault';

/**
 * The entry of a `/v1` request, its station's token as `station`. Field by field rather than by a
 * rest spread, which took twice as long and runs per request; instead the type of `event` makes a
 * field the event gains `never`, so `tsc` fails until it is copied here too (the entry's schema
 * takes it from the event's by itself).
 */
function apiEntry(event: ApiRequestEvent & Record<Exclude<keyof ApiRequestEvent, CopiedApiFields>, never>, realDurations: boolean): TranscriptEntry {
  const { method, route, status } = event;
  return {
    t: event.time,
    kind: 'api',
    method,
    route,
    status,
    ...(realDurations ? { ms: event.ms } : {}),
    ...(event.token !== undefined ? { station: event.token } : {}),
    ...(event.lockId !== undefined ? { lockId: event.lockId } : {}),
    ...(event.outcome !== undefined ? { outcome: event.outcome } : {}),
    ...(event.commandId ? { commandId: event.commandId } : {}),
    ...(event.fault !== undefined ? { fault: event.fault } : {}),
  };
}

function formatMiB(bytes: number): string {
  return `${Math.round((bytes / (1024 * 1024)) * 10) / 10} MiB`;
}

const ALIASES_KEPT = 10_000;

/** A `client` entry (transcript-format.ts) for a request the client judge saw. */
function clientEntry(observation: ClientObservation, tokenAlias: (fingerprint: string) => string): ClientEntry {
  const { time, accessToken, receivedAt, ...facts } = observation;
  return {
    t: new Date(time).toISOString(),
    kind: 'client',
    ...facts,
    ...(receivedAt === undefined ? {} : { receivedAt: new Date(receivedAt).toISOString() }),
    ...(accessToken === undefined ? {} : { token: tokenAlias(accessToken) }),
  };
}
