/**
 * The MQTT topic contract (docs/design.md, "Default MQTT topic contract"). Every topic template and
 * payload type is owned here: the firmware binding, the `/v1` service and the tests all build and
 * parse topics through this module. The payload schemas are declared one layer down, in
 * src/station/station-payloads.ts, and re-exported below: the station model builds payloads itself
 * and must not import mqtt/ (which imports the station).
 *
 * MQTT 3.1.1, JSON payloads, QoS 1. Status and lock state are retained; commands and acks are not.
 */
import { TypeCompiler } from '@sinclair/typebox/compiler';
import type { Topics } from '../fixture/fixture-schema.js';
import {
  StatusPayloadSchema,
  LockStatePayloadSchema,
  UnlockCommandSchema,
  AckPayloadSchema,
  type StatusPayload,
  type LockStatePayload,
  type UnlockCommand,
  type AckPayload,
} from '../station/station-payloads.js';

// The default templates are declared beside the fixture's TopicsSchema, whose @default texts
// they match, because the fixture loader fills them in and sits below mqtt/; this module, which
// owns the templates, is where they are read from.
export { DEFAULT_TOPICS } from '../fixture/fixture-schema.js';

/** QoS of every message of the contract. */
export const CONTRACT_QOS = 1 as const;

// Declared in src/station/station-payloads.ts, below mqtt/, because the station model builds them
// (see there); this module is still where the contract is read and imported from.
export * from '../station/station-payloads.js';

const checkers = {
  status: TypeCompiler.Compile(StatusPayloadSchema),
  lockState: TypeCompiler.Compile(LockStatePayloadSchema),
  unlock: TypeCompiler.Compile(UnlockCommandSchema),
  acks: TypeCompiler.Compile(AckPayloadSchema),
};

/** What each kind of topic carries. */
export interface PayloadByKind {
  status: StatusPayload;
  lockState: LockStatePayload;
  unlock: UnlockCommand;
  acks: AckPayload;
}
export type TopicKind = keyof PayloadByKind;

/**
 * Parses a payload of the contract. Returns undefined for anything that is not JSON of the
 * expected shape: a malformed message from a foreign client must never crash a station or the service.
 */
export function parsePayload<K extends TopicKind>(kind: K, payload: Buffer | string): PayloadByKind[K] | undefined {
  let value: unknown;
  try {
    value = JSON.parse(payload.toString());
  } catch {
    return undefined;
  }
  return checkers[kind].Check(value) ? (value as PayloadByKind[K]) : undefined;
}

export function encodePayload<K extends TopicKind>(_kind: K, payload: PayloadByKind[K]): string {
  return JSON.stringify(payload);
}

/** Where a topic of the contract points: the station and, for lock topics, the lock. */
export interface TopicAddress {
  token: string;
  lockId?: string;
}

/**
 * The topics of one station. Built once per station from its (possibly overridden) templates;
 * `match` reverses a template so incoming topics can be routed without string splitting by hand.
 */
export class StationTopics {
  readonly templates: Topics;

  constructor(templates: Topics) {
    this.templates = templates;
  }

  topic(kind: TopicKind, address: TopicAddress): string {
    return fill(this.templates[kind], this.templates.prefix, address.token, address.lockId);
  }

  /** The subscription filter for `kind`, with `+` in place of the parts not given. */
  filter(kind: TopicKind, address: Partial<TopicAddress> = {}): string {
    return fill(this.templates[kind], this.templates.prefix, address.token ?? '+', address.lockId ?? '+');
  }

  /** Parses a topic of `kind`; undefined when it does not fit the template. */
  match(kind: TopicKind, topic: string): TopicAddress | undefined {
    const pattern = matchers(this.templates)[kind];
    const found = pattern.exec(topic);
    if (!found?.groups) return undefined;
    const { token, lockId } = found.groups;
    if (token === undefined) return undefined;
    return lockId === undefined ? { token } : { token, lockId };
  }
}

/**
 * One `StationTopics` per distinct set of templates among `stations`, shared by the stations that
 * use it: most fleets have one set, so subscribing and routing stay a handful of patterns however
 * many stations there are.
 */
export function groupTopics(stations: readonly { token: string; behaviour: { topics: Topics } }[]): {
  distinct: StationTopics[];
  byToken: Map<string, StationTopics>;
} {
  const byTemplates = new Map<string, StationTopics>();
  const byToken = new Map<string, StationTopics>();
  for (const station of stations) {
    const t = station.behaviour.topics;
    const key = JSON.stringify([t.prefix, t.status, t.lockState, t.unlock, t.acks]);
    let topics = byTemplates.get(key);
    if (!topics) {
      topics = new StationTopics(t);
      byTemplates.set(key, topics);
    }
    byToken.set(station.token, topics);
  }
  return { distinct: [...byTemplates.values()], byToken };
}

/** Templates split at their placeholders, once each: topics are filled on every publication. */
const templateParts = new Map<string, string[]>();

function fill(template: string, prefix: string, token: string, lockId: string | undefined): string {
  let parts = templateParts.get(template);
  if (!parts) {
    parts = template.split(/(\{prefix\}|\{token\}|\{lockId\})/).filter((part) => part !== '');
    templateParts.set(template, parts);
  }
  let topic = '';
  for (const part of parts) topic += part === '{prefix}' ? prefix : part === '{token}' ? token : part === '{lockId}' ? (lockId ?? '') : part;
  return topic;
}

const matcherCache = new WeakMap<Topics, Record<TopicKind, RegExp>>();

function matchers(templates: Topics): Record<TopicKind, RegExp> {
  let cached = matcherCache.get(templates);
  if (!cached) {
    const build = (template: string): RegExp => {
      const withPrefix = template.replaceAll('{prefix}', templates.prefix);
      const source = withPrefix
        .split(/(\{token\}|\{lockId\})/)
        .map((part) => (part === '{token}' ? '(?<token>[^/]+)' : part === '{lockId}' ? '(?<lockId>[^/]+)' : escapeRegExp(part)))
        .join('');
      return new RegExp(`^${source}$`);
    };
    cached = {
      status: build(templates.status),
      lockState: build(templates.lockState),
      unlock: build(templates.unlock),
      acks: build(templates.acks),
    };
    matcherCache.set(templates, cached);
  }
  return cached;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
