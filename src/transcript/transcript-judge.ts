/**
 * Judges a recorded run again, offline (`station-sim transcript judge`, docs/judge.md): the
 * transcript's entries are fed, in file order, to the same judges the live run had, with the
 * settings given (a fixture's `judge` section, or the one the transcript recorded).
 *
 * `observe` is the one place that hands entries to judges: an unlock entry recorded where the
 * station received it (it carries `delivery`) becomes the `ReceivedCommand` the service judge
 * (src/judge/service-judge.ts) saw live, and a `client` entry the `ClientObservation` the client
 * judge (src/judge/client-judge.ts) saw live.
 */
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { JudgeSettingsSchema, type JudgeSettings } from '../fixture/judge-schema.js';
import { JudgeLog, type JudgeFinding } from '../judge/judge-log.js';
import { ServiceJudge } from '../judge/service-judge.js';
import { ClientJudge } from '../judge/client-judge.js';
import { readUnlockCommand } from '../mqtt/station-client.js';
import type { JudgeVerdict } from '../judge/verdict.js';
import { payloadBytes, type ClientEntry, type Delivery, type MqttEntry, type Published, type SimEntry, type TranscriptEntry } from './transcript-format.js';
import type { PublishProperties } from '../mqtt/lean-client/index.js';
import { SimError } from '../errors.js';

const settingsChecker = TypeCompiler.Compile(JudgeSettingsSchema);

/** Where the settings a replay judged by came from. */
export type SettingsSource = 'given' | 'transcript' | 'defaults';

export interface TranscriptJudgeOptions {
  /** Settings to judge by, whatever the transcript recorded (`--fixture`). @default the transcript's, else every rule on with default thresholds */
  settings?: JudgeSettings;
}

export interface ReplayResult extends JudgeVerdict {
  findings: JudgeFinding[];
  /** The settings judged by, and where they came from. */
  settings: JudgeSettings;
  settingsSource: SettingsSource;
  /** Commands judged. */
  judged: number;
  /** `/v1` requests judged (`client` entries). */
  requests: number;
  /**
   * Commands that could not be judged: unlock entries without what the station saw (a transcript
   * written before it was recorded, or commands to stations whose fleet ran in another process).
   */
  unjudgeable: number;
  /** Findings the live run recorded (`judge` entries), for comparison. */
  recorded: Record<string, number>;
}

export class TranscriptJudge {
  readonly #given: JudgeSettings | undefined;
  #recordedSettings: JudgeSettings | undefined;
  #service: ServiceJudge | undefined;
  #client: ClientJudge | undefined;
  readonly #log = new JudgeLog();
  #judged = 0;
  #requests = 0;
  #unjudgeable = 0;
  readonly #recorded: Record<string, number> = {};

  constructor(options: TranscriptJudgeOptions = {}) {
    this.#given = options.settings;
  }

  /** Takes the next entry of the transcript. Throws a BAD_REQUEST when the transcript cannot be judged as it says. */
  observe(entry: TranscriptEntry): void {
    switch (entry.kind) {
      case 'sim':
        if (entry.event === 'judge-settings') this.#takeSettings(entry.settings);
        // A reset of the whole simulator (`POST /sim/v1/reset`) is a new start for the client
        // rules' counts, live (src/simulator/start-simulator.ts, onReset) and so here.
        else if (isSimulatorReset(entry)) this.#client?.forgetAfterReset();
        return;
      case 'mqtt':
        // What the embedded broker saw of a misdeed's publication (docs/judge.md, "What the broker sees").
        if (entry.published !== undefined) this.#observePublished(entry, entry.published);
        else if (entry.direction === 'down' && (entry.message ?? 'unlock') === 'unlock') this.#observeCommand(entry);
        return;
      case 'api':
        // For people; the `client` entry of the same request is what the client judge saw.
        return;
      case 'client':
        this.#observeRequest(entry);
        return;
      case 'judge':
        this.#recorded[entry.rule] = (this.#recorded[entry.rule] ?? 0) + 1;
        return;
    }
  }

  result(): ReplayResult {
    const settings = this.#settingsNow();
    return {
      summary: this.#log.summary(),
      findings: this.#log.findings(),
      settings: settings.settings,
      settingsSource: settings.source,
      judged: this.#judged,
      requests: this.#requests,
      unjudgeable: this.#unjudgeable,
      recorded: { ...this.#recorded },
    };
  }

  #takeSettings(value: unknown): void {
    // The first one counts: a judge started with it already.
    if (this.#recordedSettings !== undefined || this.#service !== undefined || this.#client !== undefined) return;
    if (!settingsChecker.Check(value)) {
      if (this.#given !== undefined) return;
      throw new SimError(
        'BAD_REQUEST',
        'the judge settings this transcript recorded are not ones this version of station-sim knows (a rule id or threshold it does not have); give --fixture to judge by a fixture\'s',
      );
    }
    this.#recordedSettings = value;
  }

  #settingsNow(): { settings: JudgeSettings; source: SettingsSource } {
    if (this.#given !== undefined) return { settings: this.#given, source: 'given' };
    if (this.#recordedSettings !== undefined) return { settings: this.#recordedSettings, source: 'transcript' };
    return { settings: {}, source: 'defaults' };
  }

  #observeRequest(entry: ClientEntry): void {
    this.#client ??= new ClientJudge({ settings: this.#settingsNow().settings, onFinding: (finding) => this.#log.add(finding) });
    const { t, kind: _kind, token, receivedAt, ...facts } = entry;
    this.#requests += 1;
    // The alias stands for the token's fingerprint: equal aliases, equal tokens.
    this.#client.observe({
      ...facts,
      time: Date.parse(t),
      ...(receivedAt === undefined ? {} : { receivedAt: Date.parse(receivedAt) }),
      ...(token === undefined ? {} : { accessToken: token }),
    });
  }

  #observePublished(entry: MqttEntry, published: Published): void {
    if (entry.message === undefined) return;
    this.#service ??= new ServiceJudge({ settings: this.#settingsNow().settings, onFinding: (finding) => this.#log.add(finding) });
    const payload = entryPayload(entry, published.raw);
    this.#service.observePublished({
      kind: published.misdeed,
      message: entry.message,
      topic: entry.topic,
      token: entry.station,
      ...(entry.lockId === undefined ? {} : { lockId: entry.lockId }),
      clientId: published.clientId,
      retain: published.retain,
      payload,
      command: entry.message === 'unlock' ? readUnlockCommand(payload) : undefined,
      now: Date.parse(entry.t),
      ...(published.gateway ? { fromGateway: true } : {}),
    });
  }

  #observeCommand(entry: MqttEntry): void {
    const delivery = entry.delivery;
    if (delivery === undefined || entry.lockId === undefined) {
      this.#unjudgeable += 1;
      return;
    }
    this.#service ??= new ServiceJudge({ settings: this.#settingsNow().settings, onFinding: (finding) => this.#log.add(finding) });
    const payload = entryPayload(entry, delivery.raw);
    this.#judged += 1;
    this.#service.observe({
      token: entry.station,
      lockId: entry.lockId,
      qos: delivery.qos,
      retain: delivery.retain,
      payload,
      // Read as the station read it (src/mqtt/station-client.ts).
      command: readUnlockCommand(payload),
      now: Date.parse(entry.t),
      online: delivery.online,
      onlineSince: delivery.onlineSince === undefined ? undefined : Date.parse(delivery.onlineSince),
      // The judge asks only whether the station has the topic's lock.
      locks: delivery.knownLock ? [{ lockId: entry.lockId }] : [],
      commandTtlMs: delivery.commandTtlMs,
      ...(delivery.gateway ? { fromGateway: true } : {}),
      ...(delivery.heldAtStop ? { heldAtStop: true } : {}),
      ...(delivery.undelivered ? { undelivered: true } : {}),
      ...(delivery.properties === undefined ? {} : { properties: receivedProperties(delivery.properties) }),
    });
  }
}

/** The `sim` entry of `POST /sim/v1/reset`: a control event with no station (transcript-recorder.ts). */
export function isSimulatorReset(entry: SimEntry): boolean {
  return entry.event === 'control' && entry.station === undefined && entry.detail === 'reset';
}

/** Judges every entry of `entries`, in order. */
export async function judgeTranscript(entries: AsyncIterable<TranscriptEntry> | Iterable<TranscriptEntry>, options: TranscriptJudgeOptions = {}): Promise<ReplayResult> {
  const judge = new TranscriptJudge(options);
  for await (const entry of entries) judge.observe(entry);
  return judge.result();
}

/** A payload's bytes back: from `raw` (base64) when recorded, else from the entry's JSON or text. */
function entryPayload(entry: MqttEntry, raw: string | undefined): Buffer {
  return raw !== undefined ? Buffer.from(raw, 'base64') : payloadBytes(entry.payload);
}

/** MQTT 5 properties as the transcript holds them, back as the station had them (Correlation Data from base64). */
function receivedProperties(entry: NonNullable<Delivery['properties']>): PublishProperties {
  const { correlationData, ...rest } = entry;
  return correlationData === undefined ? rest : { ...rest, correlationData: Buffer.from(correlationData, 'base64') };
}
