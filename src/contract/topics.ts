/**
 * The MQTT topic contract (docs/design.md, "Default MQTT topic contract"): the topic templates, what
 * a fixture may put in them, their defaults, and how topics are built, matched and their payloads
 * parsed. The firmware binding, the `/v1` service, the control plane and the tests all build and
 * parse topics through this module; the payloads themselves are in payloads.ts beside it.
 *
 * MQTT 3.1.1, JSON payloads, QoS 1. Status and lock state are retained; commands and acks are not.
 */
import { Type, type Static } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import {
  StatusPayloadSchema,
  LockStatePayloadSchema,
  UnlockCommandSchema,
  AckPayloadSchema,
  type StatusPayload,
  type LockStatePayload,
  type UnlockCommand,
  type AckPayload,
} from './payloads.js';

/**
 * What a prefix may be: one or more topic levels, none empty, with no MQTT wildcard (a topic name
 * takes none, MQTT 3.1.1 section 4.7.1), no null character (section 1.5.3) and no brace, so that it
 * cannot bring a placeholder into the templates it is put into (`StationTopics` below matches
 * `{token}` and `{lockId}` after putting the prefix in).
 */
const PREFIX_LEVEL = '[^/#+{}\\u0000]+';
/**
 * `patternErrorMessage` says in words what a `pattern` wants: src/fixture/schema-errors.ts reports
 * it, and editors that read the schema (VS Code) show it too.
 */
const PrefixSchema = Type.String({
  pattern: `^${PREFIX_LEVEL}(/${PREFIX_LEVEL})*$`,
  patternErrorMessage: 'must be one or more topic levels separated by "/", none of them empty, without #, +, { or }',
  description: 'Replaces {prefix}. @default "stations"',
});

/**
 * Topic templates, as a fixture may give them (per fleet or per station). `{prefix}`, `{token}` and
 * `{lockId}` are replaced; see docs/design.md.
 */
export const TopicsSchema = Type.Object(
  {
    prefix: Type.Optional(PrefixSchema),
    status: Type.Optional(Type.String({ minLength: 1, description: 'Retained station status. @default "{prefix}/{token}/status"' })),
    lockState: Type.Optional(Type.String({ minLength: 1, description: 'Retained lock state. @default "{prefix}/{token}/locks/{lockId}/state"' })),
    unlock: Type.Optional(Type.String({ minLength: 1, description: 'Unlock command (service to station). @default "{prefix}/{token}/locks/{lockId}/unlock"' })),
    acks: Type.Optional(Type.String({ minLength: 1, description: 'Command acknowledgements. @default "{prefix}/{token}/acks"' })),
  },
  { additionalProperties: false },
);

/** One station's templates, defaults filled in. */
export type Topics = Required<Static<typeof TopicsSchema>>;

/**
 * The default templates (docs/design.md, "Default MQTT topic contract"), matching the @default
 * texts of `TopicsSchema`; the fixture loader fills them in where a fixture says nothing.
 */
export const DEFAULT_TOPICS: Topics = {
  prefix: 'stations',
  status: '{prefix}/{token}/status',
  lockState: '{prefix}/{token}/locks/{lockId}/state',
  unlock: '{prefix}/{token}/locks/{lockId}/unlock',
  acks: '{prefix}/{token}/acks',
};

/** QoS of every message of the contract. */
export const CONTRACT_QOS = 1 as const;

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
