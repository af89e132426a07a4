/**
 * The MQTT topic contract (DESIGN.md, "Default MQTT topic contract"). Every topic template and
 * payload type is owned here: the firmware binding, the `/v1` service and the tests all build and
 * parse topics through this module. The payload schemas are declared one layer down, in
 * src/station/station-payloads.ts, and re-exported below: the station model builds payloads itself
 * and must not import mqtt/ (which imports the station).
 *
 * MQTT 3.1.1, JSON payloads, QoS 1. Status and lock state are retained; commands and acks are not.
 */
import { Type, type Static } from '@sinclair/typebox';
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
import { FaultSpecSchema, type Fault } from '../fixture/fault-schema.js';
import type { StationSnapshot } from '../station/station-model.js';

/** The default templates; a fixture may override any of them per fleet or per station. */
export const DEFAULT_TOPICS: Topics = {
  prefix: 'stations',
  status: '{prefix}/{token}/status',
  lockState: '{prefix}/{token}/locks/{lockId}/state',
  unlock: '{prefix}/{token}/locks/{lockId}/unlock',
  acks: '{prefix}/{token}/acks',
};

/** QoS of every message of the contract. */
export const CONTRACT_QOS = 1 as const;

// Declared in src/station/station-payloads.ts, below mqtt/, because the station model builds them
// (see there); this module is still where the contract is read and imported from.
export {
  StatusPayloadSchema,
  LockStatePayloadSchema,
  UnlockCommandSchema,
  AckPayloadSchema,
  type StatusPayload,
  type LockStatePayload,
  type UnlockCommand,
  type AckPayload,
} from '../station/station-payloads.js';

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

/*
 * The simulator's own control topics (docs/control-plane.md, "MQTT control topics"). They are not
 * part of the station contract, so they live in a namespace of their own that fixtures cannot
 * rename: the control plane reaches every fleet process through the broker, wherever it runs.
 */
export const SIM_TOPICS = {
  /** Control plane → the fleet process hosting `{token}`. */
  control: (token: string) => `station-sim/control/${token}`,
  controlFilter: 'station-sim/control/+',
  /** Control plane → every fleet process: `query` (snapshots) or `reset`. */
  fleet: 'station-sim/fleet',
  /** Fleet process → control plane, one topic per request. */
  reply: (requestId: string) => `station-sim/replies/${requestId}`,
  /** Simulator events the contract does not carry (a fault fired). */
  events: (token: string) => `station-sim/events/${token}`,
  eventsFilter: 'station-sim/events/+',
} as const;

/**
 * A request id becomes a level of the reply topic, so it is one plain word: a `/`, `+` or `#` in it
 * would make a topic the agent cannot publish to (the control channel sends UUIDs).
 */
const RequestIdSchema = Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' });

const PhysicalActionSchema = Type.Union([Type.Literal('jam'), Type.Literal('unjam'), Type.Literal('forceOpen'), Type.Literal('forceClose')]);

export const ControlRequestSchema = Type.Intersect([
  Type.Object({ requestId: RequestIdSchema }),
  Type.Union([
    Type.Object({ action: Type.Literal('connection'), online: Type.Boolean() }),
    Type.Object({ action: Type.Literal('battery'), voltage: Type.Number({ minimum: 0, maximum: 100 }) }),
    Type.Object({ action: Type.Literal('reboot'), downMs: Type.Integer({ minimum: 0 }) }),
    Type.Object({ action: Type.Literal('physical'), lockId: Type.String(), physical: PhysicalActionSchema }),
    Type.Object({ action: Type.Literal('addFault'), fault: FaultSpecSchema }),
    Type.Object({ action: Type.Literal('removeFault'), faultId: Type.String() }),
    Type.Object({ action: Type.Literal('clearFaults') }),
    Type.Object({ action: Type.Literal('snapshot') }),
  ]),
]);
export const FleetRequestSchema = Type.Object({
  requestId: RequestIdSchema,
  action: Type.Union([Type.Literal('query'), Type.Literal('reset')]),
});
export const SimEventSchema = Type.Object({
  fault: Type.String(),
  lockId: Type.Optional(Type.String()),
  commandId: Type.Optional(Type.String()),
});

/** One control action for one station, on `station-sim/control/{token}`. */
export type ControlRequest = Static<typeof ControlRequestSchema>;
/** A fleet-wide request, on `station-sim/fleet`. */
export type FleetRequest = Static<typeof FleetRequestSchema>;
/** A fault fired, on `station-sim/events/{token}`. */
export type SimEvent = Static<typeof SimEventSchema>;
/** The answer to a control request. */
export type ControlReply =
  | { requestId: string; ok: true; station: StationSnapshot; fault?: Fault }
  | { requestId: string; ok: false; code: 'LOCK_NOT_FOUND' | 'FAULT_NOT_FOUND' | 'BAD_REQUEST'; message: string };
/** One fleet process's answer to a fleet request. */
export interface FleetReply {
  requestId: string;
  stations: StationSnapshot[];
}

const simCheckers = {
  control: TypeCompiler.Compile(ControlRequestSchema),
  fleet: TypeCompiler.Compile(FleetRequestSchema),
  event: TypeCompiler.Compile(SimEventSchema),
};

/** Parses a simulator control message; undefined when it is not JSON of the expected shape. */
export function parseSimMessage<K extends keyof typeof simCheckers>(
  kind: K,
  payload: Buffer | string,
): (K extends 'control' ? ControlRequest : K extends 'fleet' ? FleetRequest : SimEvent) | undefined {
  let value: unknown;
  try {
    value = JSON.parse(payload.toString());
  } catch {
    return undefined;
  }
  return simCheckers[kind].Check(value) ? (value as never) : undefined;
}
