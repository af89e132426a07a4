/**
 * What each identity may publish and subscribe to on the embedded broker (docs/design.md, "Trust
 * model"; docs/mqtt-security.md, "The embedded broker, secured"). A connection's `Acl` is chosen
 * at CONNECT, so the per-packet check is a method call on it; a station's is built at its first
 * CONNECT and kept, the shared roles' once per broker.
 */
import type { Topics } from '../contract/topics.js';
import { SIM_NAMESPACE, SIM_TOPICS } from '../contract/sim-topics.js';
import type { Who } from './broker-identities.js';
import type { BrokerSecurity } from './broker-security.js';
import { around, filterFits, filterOverlaps, fill, fitsAround, levels, topicFits, type Around, type Level } from './topic-patterns.js';

/** What one authenticated connection may do, compiled at CONNECT. */
export interface Acl {
  /** Who, for refusal events: a role, and a station's token. Never a secret. */
  readonly identity: string;
  canPublish(topic: string): boolean;
  canSubscribe(filter: string): boolean;
  /**
   * A reading role's wider filter (`stations/#`, `#`): granted when it can match something the
   * role may read, with each message then checked as it is delivered (`canRead`), as Mosquitto's
   * ACL file does. Absent for stations, held to their exact filters.
   */
  overlapsReadable?(filter: string): boolean;
  canRead?(topic: string): boolean;
}

/** A session of the simulator's own, inside its process: it may do anything. */
export const EVERYTHING: Acl = { identity: 'internal', canPublish: () => true, canSubscribe: () => true };

/** A station's: its own topics as fixed strings, or a prefix and a suffix around `{lockId}`; one or two comparisons per PUBLISH. */
class StationAcl implements Acl {
  readonly identity: string;
  readonly #status: string;
  readonly #acks: string;
  readonly #state: Around | Level[];
  readonly #unlock: Around | Level[];
  readonly #locks: ReadonlySet<string>;

  constructor(token: string, t: Topics, locks: ReadonlySet<string>) {
    this.identity = `station:${token}`;
    this.#locks = locks;
    this.#status = fill(t.status, t.prefix, token);
    this.#acks = fill(t.acks, t.prefix, token);
    this.#state = around(t.lockState, t.prefix, token) ?? levels(fill(t.lockState, t.prefix, token));
    this.#unlock = around(t.unlock, t.prefix, token) ?? levels(fill(t.unlock, t.prefix, token));
  }

  canPublish(topic: string): boolean {
    if (topic === this.#status || topic === this.#acks) return true;
    const state = this.#state;
    if (Array.isArray(state)) return topicFits(state, topic);
    // One of its own locks only: no phantom locks.
    return fitsAround(state, topic) && this.#locks.has(topic.slice(state.pre.length, topic.length - state.post.length));
  }

  canSubscribe(filter: string): boolean {
    const unlock = this.#unlock;
    if (Array.isArray(unlock)) return filterFits(unlock, filter);
    // The station's own `…/locks/+/unlock`, or one lock's.
    if (filter === `${unlock.pre}+${unlock.post}`) return true;
    return !filter.includes('+') && !filter.includes('#') && fitsAround(unlock, filter);
  }
}

/** A shared role's (service, control, observer): topic patterns of every station's templates. */
class PatternAcl implements Acl {
  readonly identity: string;
  readonly #publish: Level[][];
  readonly #subscribe: Level[][];
  readonly #exact: Set<string>;

  constructor(identity: string, publish: Level[][], subscribe: Level[][], exact: string[] = []) {
    this.identity = identity;
    this.#publish = publish;
    this.#subscribe = subscribe;
    this.#exact = new Set(exact);
  }

  canPublish(topic: string): boolean {
    if (this.#exact.has(topic)) return true;
    for (const pattern of this.#publish) if (topicFits(pattern, topic)) return true;
    return false;
  }

  canSubscribe(filter: string): boolean {
    if (this.#exact.has(filter)) return true;
    for (const pattern of this.#subscribe) if (filterFits(pattern, filter)) return true;
    return false;
  }

  overlapsReadable(filter: string): boolean {
    if (this.#exact.has(filter)) return true;
    for (const pattern of this.#subscribe) if (filterOverlaps(pattern, filter)) return true;
    return false;
  }

  canRead(topic: string): boolean {
    if (this.#exact.has(topic)) return true;
    for (const pattern of this.#subscribe) if (topicFits(pattern, topic)) return true;
    return false;
  }
}

/** The ACLs of one broker's identities. */
export class BrokerAcls {
  readonly #tokens: Map<string, Topics>;
  readonly #locksOf: Map<string, ReadonlySet<string>>;
  readonly #service: PatternAcl;
  readonly #control: PatternAcl;
  readonly #observer: PatternAcl;
  readonly #stationAcls = new Map<string, StationAcl>();

  constructor(security: BrokerSecurity) {
    this.#tokens = new Map(security.tokens.map((token, index) => [token, security.topicSets[security.topicSetOf[index]!]!]));
    const lockSets = security.lockSets.map((ids) => new Set(ids));
    this.#locksOf = new Map(security.tokens.map((token, index) => [token, lockSets[security.lockSetOf[index]!]!]));
    const sets = security.topicSets;
    const each = (kind: keyof Omit<Topics, 'prefix'>) => sets.map((t) => levels(fill(t[kind], t.prefix)));
    const stationTopics = [...each('status'), ...each('lockState'), ...each('acks')];
    // The simulator's own namespace (src/contract/sim-topics.ts): only the control identity may touch it.
    const namespace = levels(`${SIM_NAMESPACE}/#`);
    this.#service = new PatternAcl('service', each('unlock'), stationTopics);
    this.#control = new PatternAcl('control', [namespace], [namespace, ...stationTopics, ...each('unlock')]);
    this.#observer = new PatternAcl('observer', [], [...stationTopics, ...each('unlock')]);
  }

  /** The ACL of `who`, connected as `clientId`. */
  of(who: Who, clientId: string): Acl {
    switch (who.role) {
      case 'station': {
        let acl = this.#stationAcls.get(who.token);
        if (!acl) {
          acl = new StationAcl(who.token, this.#tokens.get(who.token)!, this.#locksOf.get(who.token)!);
          // Kept while the fleet is: a station reconnects often, and its ACL is a few strings.
          this.#stationAcls.set(who.token, acl);
        }
        return acl;
      }
      case 'service': {
        // Its own start-up sync topic (src/service/station-gateway.ts), besides the shared rules.
        const sync = SIM_TOPICS.serviceSync(clientId);
        const shared = this.#service;
        return {
          identity: 'service',
          canPublish: (topic) => topic === sync || shared.canPublish(topic),
          canSubscribe: (filter) => filter === sync || shared.canSubscribe(filter),
          overlapsReadable: (filter) => filter === sync || shared.overlapsReadable(filter),
          canRead: (topic) => topic === sync || shared.canRead(topic),
        };
      }
      case 'control':
      case 'agent':
        return this.#control;
      case 'observer':
        return this.#observer;
    }
  }
}
