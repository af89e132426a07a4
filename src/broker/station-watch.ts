/**
 * What only the embedded broker sees (docs/judge.md, "What the broker sees"): every PUBLISH and the
 * client that sent it. A `StationWatch` runs on the broker's own thread (or beside it, with the
 * broker on the calling thread) and passes on only misdeeds:
 *
 * - a command to a station the fixture does not have (the broker delivers it to nobody), unless a
 *   client with that station's client id has published (a station of another fixture, another process);
 * - a command published retained to a station of the watching fleet (MQTT 3.1.1, section 3.3.1.3
 *   clears the flag on live deliveries, so the station cannot tell);
 * - a station's `status`, lock `state` or ack published by a client that is not that station.
 *
 * The station's own messages (its will included: aedes publishes it as the station's client) and
 * the simulator's own topics pass with a few string comparisons and no allocation: a station's
 * client is known by its client id (looked up once per connection), and its topics start with its
 * token where the template puts it. Only a PUBLISH of another client on a station topic (a
 * backend's command, one per unlock) has its topic matched by the templates (`StationTopics.match`).
 */
import { StationTopics, type TopicKind, type Topics } from '../contract/topics.js';
import { tokenReader } from '../fixture/mqtt-identities.js';
import { callSafely } from '../shared/throw-later.js';

/** What the watch is told once: the fixture's stations and how their clients are named. Crosses to the broker's thread as is. */
export interface StationWatchSpec {
  /** The distinct topic templates of the fixture's stations. */
  templates: Topics[];
  /**
   * Every station of the fixture: its token, the index of its templates in `templates`, and
   * whether it is a station of the watching fleet (retained commands and spoofing are judged for
   * those; a station of another shard is only not unknown).
   */
  stations: { token: string; templates: number; fleet: boolean }[];
  /** The stations' client id template, `{token}` in it (the fixture's `mqtt.identities.station.clientId`). */
  clientId: string;
}

/** A PUBLISH the watch passes on. */
export interface StationMisdeed {
  kind: 'unknown-station' | 'retained-command' | 'spoofed';
  /** Which message of the contract the topic is. */
  message: TopicKind;
  topic: string;
  /** The station the topic names. */
  token: string;
  lockId?: string;
  /** The publisher's client id. */
  clientId: string;
  /** The PUBLISH's retain flag as the broker got it. */
  retain: boolean;
  payload: Buffer;
}

/** What the watch reads of an aedes PUBLISH and its client. */
export interface WatchedPacket {
  topic: string;
  payload: Buffer | string;
  retain?: boolean;
}

/** A station's templates where `{token}` is the first placeholder: the literal before it, and the ones right after it. */
interface OwnShape {
  head: string;
  /** Per message kind: the literal after `{token}`, and whether the template ends there. */
  tails: { tail: string; whole: boolean }[];
}

export class StationWatch {
  readonly #topics: StationTopics[];
  /** token → its templates' index × 2, + 1 for a station of the watching fleet. */
  readonly #stations = new Map<string, number>();
  /** The literal every station topic of each template starts with (before its first placeholder). */
  readonly #heads: string[];
  readonly #own: (OwnShape | undefined)[];
  /** The token a station's client id carries, if the id fits the template. */
  readonly #clientIdToken: (clientId: string) => string | undefined;
  /** Per connection: the station it is, or null for any other client. */
  readonly #owners = new WeakMap<object, Owner | null>();
  /** Whether a station can be told from another client by its client id (the template names the token). */
  readonly #spoofing: boolean;
  /** Tokens of station-shaped client ids the fixture does not have: stations another process runs. */
  readonly #elsewhere = new Set<string>();

  constructor(spec: StationWatchSpec) {
    this.#topics = spec.templates.map((templates) => new StationTopics(templates));
    for (const station of spec.stations) this.#stations.set(station.token, station.templates * 2 + (station.fleet ? 1 : 0));
    this.#heads = [...new Set(this.#topics.flatMap((topics) => KINDS.map((kind) => headOf(topics.filter(kind, { token: '{token}', lockId: '{lockId}' })))))];
    this.#own = this.#topics.map(ownShape);
    // Without `{token}` every station has the same client id, and no PUBLISH shows which one sent it.
    this.#spoofing = spec.clientId.includes('{token}');
    this.#clientIdToken = tokenReader(spec.clientId);
  }

  /** The misdeed a PUBLISH is, if any. `client` is aedes' (null for the broker's own messages). */
  classify(packet: WatchedPacket, client: { id: string } | null): StationMisdeed | undefined {
    if (client === null) return undefined;
    const topic = packet.topic;
    const owner = this.#ownerOf(client);
    if (owner !== null && isOwnTopic(owner, topic)) return undefined;
    if (!this.#startsLikeStationTopic(topic)) return undefined;
    return this.#classifyTopic(packet, client.id, owner === null ? null : owner.token);
  }

  #classifyTopic(packet: WatchedPacket, clientId: string, owner: string | null): StationMisdeed | undefined {
    const topic = packet.topic;
    /** A command whose station no template set knows, so far: another set may still have it. */
    let unknown: { token: string; lockId?: string } | undefined;
    for (let index = 0; index < this.#topics.length; index++) {
      const topics = this.#topics[index]!;
      const unlock = topics.match('unlock', topic);
      if (unlock?.lockId !== undefined) {
        const known = this.#stations.get(unlock.token);
        if (known === undefined || known >> 1 !== index) {
          if (!this.#elsewhere.has(unlock.token)) unknown ??= unlock;
          continue;
        }
        if (packet.retain === true && (known & 1) === 1 && packet.payload.length > 0) return misdeed('retained-command', 'unlock', { packet, clientId, ...unlock });
        return undefined;
      }
      if (!this.#spoofing) continue;
      for (const kind of SPOOFABLE) {
        const address = topics.match(kind, topic);
        const known = address && this.#stations.get(address.token);
        // A message of a station the fleet does not run is nobody's here to judge; one of its own, the station's.
        if (known === undefined || known >> 1 !== index) continue;
        if ((known & 1) === 0 || address!.token === owner) return undefined;
        return misdeed('spoofed', kind, { packet, clientId, ...address! });
      }
    }
    return unknown ? misdeed('unknown-station', 'unlock', { packet, clientId, ...unknown }) : undefined;
  }

  /** The station this connection is, or null; worked out at its first PUBLISH. */
  #ownerOf(client: { id: string }): Owner | null {
    let owner = this.#owners.get(client);
    if (owner === undefined) {
      const token = this.#tokenOfClientId(client.id);
      const shape = token === undefined ? undefined : this.#own[this.#stations.get(token)! >> 1];
      owner = token === undefined ? null : { token, prefix: shape === undefined ? undefined : shape.head + token, tails: shape?.tails ?? [] };
      this.#owners.set(client, owner);
    }
    return owner;
  }

  #tokenOfClientId(id: string): string | undefined {
    const token = this.#clientIdToken(id);
    if (token === undefined || this.#stations.has(token)) return token;
    // A station of another fixture on the same broker (its own process): it exists, so a command to
    // it is not to a station that does not exist; nothing else of it is this fleet's to judge.
    if (this.#elsewhere.size < MAX_STATIONS_ELSEWHERE) this.#elsewhere.add(token);
    return undefined;
  }

  #startsLikeStationTopic(topic: string): boolean {
    for (const head of this.#heads) if (topic.startsWith(head)) return true;
    return false;
  }
}

/** A connection that is a station: its token, and its own topics' shape (`OwnShape`) with the token in place. */
interface Owner {
  token: string;
  /** Every topic of its own starts with this; undefined when its templates have no such shape. */
  prefix: string | undefined;
  tails: OwnShape['tails'];
}

/** Whether `topic` is one of the station's own status, lock state or ack topics: string comparisons only. */
function isOwnTopic({ prefix, tails }: Owner, topic: string): boolean {
  if (prefix === undefined || !topic.startsWith(prefix)) return false;
  const at = prefix.length;
  for (let index = 0; index < tails.length; index++) {
    const { tail, whole } = tails[index]!;
    if (topic.startsWith(tail, at) && (!whole || topic.length === at + tail.length)) return true;
  }
  return false;
}

/** Stations of other fixtures remembered at most (past it, a command to one may be taken for a command to nobody). */
const MAX_STATIONS_ELSEWHERE = 100_000;
const KINDS: readonly TopicKind[] = ['status', 'lockState', 'unlock', 'acks'];
/** What a station publishes, and so what another client may not publish for it. */
const SPOOFABLE = ['status', 'lockState', 'acks'] as const;

function misdeed(
  kind: StationMisdeed['kind'],
  message: TopicKind,
  seen: { packet: WatchedPacket; clientId: string; token: string; lockId?: string },
): StationMisdeed {
  const { packet } = seen;
  return {
    kind,
    message,
    topic: packet.topic,
    token: seen.token,
    ...(seen.lockId === undefined ? {} : { lockId: seen.lockId }),
    clientId: seen.clientId,
    retain: packet.retain === true,
    payload: Buffer.isBuffer(packet.payload) ? packet.payload : Buffer.from(packet.payload),
  };
}

/** The literal a filled template starts with, up to its first placeholder. */
function headOf(filled: string): string {
  const at = filled.indexOf('{');
  return at === -1 ? filled : filled.slice(0, at);
}

/** The station's own shape, when `{token}` is the first placeholder of its status, lock state and ack templates. */
function ownShape(topics: StationTopics): OwnShape | undefined {
  let head: string | undefined;
  const tails: OwnShape['tails'] = [];
  for (const kind of SPOOFABLE) {
    const filled = topics.filter(kind, { token: '{token}', lockId: '{lockId}' });
    const at = filled.indexOf('{');
    if (at === -1 || !filled.startsWith('{token}', at)) return undefined;
    if (head !== undefined && head !== filled.slice(0, at)) return undefined;
    head = filled.slice(0, at);
    const rest = filled.slice(at + '{token}'.length);
    const next = rest.indexOf('{');
    tails.push(next === -1 ? { tail: rest, whole: true } : { tail: rest.slice(0, next), whole: false });
  }
  return head === undefined ? undefined : { head, tails };
}

/** What the watch needs of aedes: its `publish` event, told every PUBLISH routed, with its client. */
export interface PublishEvents {
  on(event: 'publish', listener: (packet: WatchedPacket, client: { id: string } | null) => void): unknown;
  off(event: 'publish', listener: (packet: WatchedPacket, client: { id: string } | null) => void): unknown;
}

/** Watches `broker`'s PUBLISHes; `listener` hears only misdeeds. Returns the function that stops watching. */
export function watchStationTopics(broker: PublishEvents, spec: StationWatchSpec, listener: (misdeed: StationMisdeed) => void): () => void {
  const watch = new StationWatch(spec);
  const onPublish = (packet: WatchedPacket, client: { id: string } | null): void => {
    const found = watch.classify(packet, client);
    if (found) callSafely(() => listener(found));
  };
  broker.on('publish', onPublish);
  return () => {
    broker.off('publish', onPublish);
  };
}
