/**
 * The embedded broker, secured (docs/mqtt-security.md, "The embedded broker, secured"; docs/design.md,
 * "Trust model"): who a connection is, and what it may publish and subscribe to.
 *
 * `brokerSecurity(fixture)` turns a fixture into plain data (it crosses to the broker's thread);
 * a `BrokerGuard` built from it gives aedes its `authenticate`, `authorizePublish` and
 * `authorizeSubscribe` hooks, guards packet sizes, and counts refusals (`RefusalLog`).
 *
 * The hooks run on every packet, so the per-packet path is cheap: at CONNECT each client gets an
 * `Acl` compiled for it (a station's own topics as fixed strings, or a prefix and a suffix around
 * `{lockId}`); a station's PUBLISH is then one or two string comparisons, no regular expression,
 * no allocation. Topic filters (SUBSCRIBE, rare) are compared level by level with the templates.
 *
 * This resolves identities for the broker only (templates to tokens, secrets read from files or
 * the environment). src/mqtt/identity.ts resolves them for the clients; the two read the same
 * fixture section and the same defaults (docs/mqtt-security.md, "Identities").
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { TLSSocket } from 'node:tls';
import type { IncomingMessage } from 'node:http';
import type { Fixture } from '../fixture/fixture-schema.js';
import type { Topics } from '../contract/topics.js';
import { DEFAULT_IDENTITIES, type MqttRole, type SecretSource } from '../fixture/mqtt-schema.js';
import { SIM_NAMESPACE, SIM_TOPICS } from '../contract/sim-topics.js';

/** Largest MQTT packet by default: a larger one closes the connection. */
export const DEFAULT_MAX_PACKET_BYTES = 65_536;

/** One identity's templates, defaults filled in. `clientId` undefined: any client id (observer). */
export interface IdentityTemplates {
  clientId: string | undefined;
  username: string;
  password: SecretSource | undefined;
}

/** What the broker enforces, as plain data (it is posted to the broker's thread). */
export interface BrokerSecurity {
  /** Authenticate every network connection and hold it to its topics; off, the broker is open (loopback use). */
  auth: boolean;
  identities: Record<MqttRole, IdentityTemplates>;
  /** Where relative secret files are found (the fixture's folder). */
  baseDir: string;
  /** The distinct topic templates of the fleet, and for each station token the index of its own. */
  topicSets: Topics[];
  tokens: string[];
  topicSetOf: number[];
  /** The distinct lock id lists of the fleet, and for each station the index of its own: a station publishes state only for the locks it has. */
  lockSets: string[][];
  lockSetOf: number[];
}

const DEFAULT_TEMPLATES = Object.fromEntries(
  Object.entries(DEFAULT_IDENTITIES).map(([role, { clientId, username }]) => [role, { clientId, username, password: undefined }]),
) as Record<MqttRole, IdentityTemplates>;

/**
 * The broker's rules for `fixture`. Authentication is on when `auth` says so, else when the
 * fixture's `mqtt.broker.auth` does, else when it gives `identities` or `certs`.
 */
export function brokerSecurity(fixture: Pick<Fixture, 'source' | 'stations' | 'mqtt'>, options: { auth?: boolean } = {}): BrokerSecurity {
  const mqtt = fixture.mqtt ?? {};
  const auth = options.auth ?? mqtt.broker?.auth ?? (mqtt.identities !== undefined || mqtt.certs !== undefined);
  const identities = {} as Record<MqttRole, IdentityTemplates>;
  for (const role of Object.keys(DEFAULT_TEMPLATES) as MqttRole[]) {
    const given = mqtt.identities?.[role];
    const fallback = DEFAULT_TEMPLATES[role];
    identities[role] = {
      clientId: given?.clientId ?? fallback.clientId,
      username: given?.username ?? fallback.username,
      password: given?.password ?? fallback.password,
    };
  }
  const topicSets: Topics[] = [];
  const setIndex = new Map<string, number>();
  const tokens: string[] = [];
  const topicSetOf: number[] = [];
  const lockSets: string[][] = [];
  const lockSetIndex = new Map<string, number>();
  const lockSetOf: number[] = [];
  // An open broker checks no topics: nothing to send to its thread.
  for (const station of auth ? fixture.stations : []) {
    const t = station.behaviour.topics;
    const key = JSON.stringify([t.prefix, t.status, t.lockState, t.unlock, t.acks]);
    let index = setIndex.get(key);
    if (index === undefined) {
      index = topicSets.push({ prefix: t.prefix, status: t.status, lockState: t.lockState, unlock: t.unlock, acks: t.acks }) - 1;
      setIndex.set(key, index);
    }
    tokens.push(station.token);
    topicSetOf.push(index);
    // A generated fleet's stations share one array of locks: keyed by it, most fleets have one list.
    const lockIds = station.locks.map((lock) => lock.lockId);
    const lockKey = lockIds.join('\u0000');
    let lockIndex = lockSetIndex.get(lockKey);
    if (lockIndex === undefined) {
      lockIndex = lockSets.push(lockIds) - 1;
      lockSetIndex.set(lockKey, lockIndex);
    }
    lockSetOf.push(lockIndex);
  }
  const source = fixture.source && !fixture.source.startsWith('<') ? fixture.source : undefined;
  return { auth, identities, baseDir: source ? path.dirname(path.resolve(source)) : process.cwd(), topicSets, tokens, topicSetOf, lockSets, lockSetOf };
}

/* ---------------------------------------------------------------- topic patterns */

/** A topic template with `{prefix}` (and `{token}` when known) filled in, split into levels. */
type Level = { lit: string } | { any: true } | { multi: true } | { re: RegExp };

/** Fills `{prefix}` and, when given, `{token}` and `{lockId}`. */
function fill(template: string, prefix: string, token?: string, lockId?: string): string {
  let topic = template.replaceAll('{prefix}', prefix);
  if (token !== undefined) topic = topic.replaceAll('{token}', token);
  if (lockId !== undefined) topic = topic.replaceAll('{lockId}', lockId);
  return topic;
}

function levels(pattern: string): Level[] {
  return pattern.split('/').map((level): Level => {
    if (level === '#') return { multi: true };
    if (level === '{token}' || level === '{lockId}') return { any: true };
    if (!level.includes('{token}') && !level.includes('{lockId}')) return { lit: level };
    const source = level
      .split(/(\{token\}|\{lockId\})/)
      .map((part) => (part === '{token}' || part === '{lockId}' ? '[^/+#]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('');
    return { re: new RegExp(`^${source}$`) };
  });
}

/** Whether a topic (no wildcards) fits a pattern. Walks the topic without splitting it. */
function topicFits(pattern: Level[], topic: string): boolean {
  let start = 0;
  for (let index = 0; index < pattern.length; index++) {
    const level = pattern[index]!;
    if ('multi' in level) return true;
    if (start > topic.length) return false;
    let end = topic.indexOf('/', start);
    if (end === -1) end = topic.length;
    if ('lit' in level) {
      if (end - start !== level.lit.length || !topic.startsWith(level.lit, start)) return false;
    } else if ('any' in level) {
      if (end === start) return false;
    } else if (!level.re.test(topic.slice(start, end))) return false;
    start = end + 1;
  }
  return start === topic.length + 1;
}

/** Whether every topic a filter matches fits the pattern (so the subscription reads nothing else). */
function filterFits(pattern: Level[], filter: string): boolean {
  const parts = filter.split('/');
  for (let index = 0; index < parts.length; index++) {
    const part = parts[index]!;
    const level = pattern[index];
    if (level === undefined) return false;
    if ('multi' in level) return true;
    if (part === '#') return false;
    if (part === '+') {
      if (!('any' in level)) return false;
      continue;
    }
    if ('lit' in level ? part !== level.lit : 'any' in level ? part === '' : !level.re.test(part)) return false;
  }
  return parts.length === pattern.length;
}

/** A topic with one variable level part (`{lockId}`): a prefix and a suffix, compared without allocating. */
interface Around {
  pre: string;
  post: string;
}

function around(template: string, prefix: string, token: string): Around | undefined {
  const filled = fill(template, prefix, token, '\u0000');
  const at = filled.indexOf('\u0000');
  if (at === -1 || filled.indexOf('\u0000', at + 1) !== -1) return undefined;
  return { pre: filled.slice(0, at), post: filled.slice(at + 1) };
}

function fitsAround({ pre, post }: Around, topic: string): boolean {
  if (topic.length <= pre.length + post.length || !topic.startsWith(pre) || !topic.endsWith(post)) return false;
  const slash = topic.indexOf('/', pre.length);
  return slash === -1 || slash >= topic.length - post.length;
}

/* ---------------------------------------------------------------- ACLs */

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

const EVERYTHING: Acl = { identity: 'internal', canPublish: () => true, canSubscribe: () => true };

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

/**
 * True when `filter` can match some topic `pattern` covers: level by level, `#` takes the rest,
 * `+` any one level, a literal level must be one the pattern's level takes.
 */
function filterOverlaps(pattern: Level[], filter: string): boolean {
  const parts = filter.split('/');
  for (let index = 0; ; index++) {
    const part = parts[index];
    const level = pattern[index];
    if (part === '#') return true;
    if (level !== undefined && 'multi' in level) return true;
    if (part === undefined || level === undefined) return part === undefined && level === undefined;
    if (part === '+') continue;
    if ('lit' in level ? part !== level.lit : 'any' in level ? part === '' : !level.re.test(part)) return false;
  }
}

/* ---------------------------------------------------------------- identities */

export type RefusalKind = 'connect' | 'publish' | 'subscribe' | 'packet-too-large';
export const REFUSAL_KINDS: readonly RefusalKind[] = ['connect', 'publish', 'subscribe', 'packet-too-large'];

/** One refusal as reported: never a password, and never a user name that did not resolve (it may be a mistyped password). */
export interface BrokerRefusal {
  kind: RefusalKind;
  /** The identity, when it was established (`station:ST-1`, `service`, `observer`, …). */
  identity?: string;
  clientId?: string;
  topic?: string;
  reason: string;
  /** When, ISO 8601. */
  at: string;
}
export type RefusalCounts = Record<RefusalKind, number>;

/** What a connection proved it is. */
type Who = { role: 'station'; token: string } | { role: Exclude<MqttRole, 'station'> };

/**
 * Counts refusals and hands them on, at most `perSecond` a second (each carries the counts so
 * far), so that a flood of refusals cannot flood whoever listens. Refusals held back are counted
 * and the counts catch up within a second.
 */
export class RefusalLog {
  readonly counts: RefusalCounts = { connect: 0, publish: 0, subscribe: 0, 'packet-too-large': 0 };
  readonly #emit: (refusal: BrokerRefusal, counts: RefusalCounts) => void;
  readonly #perSecond: number;
  #windowStart = 0;
  #inWindow = 0;
  #held: BrokerRefusal | undefined;
  #timer: NodeJS.Timeout | undefined;

  constructor(emit: (refusal: BrokerRefusal, counts: RefusalCounts) => void, perSecond = 20) {
    this.#emit = emit;
    this.#perSecond = perSecond;
  }

  add(refusal: Omit<BrokerRefusal, 'at'>): void {
    this.counts[refusal.kind]++;
    const now = Date.now();
    if (now - this.#windowStart >= 1000) {
      this.#windowStart = now;
      this.#inWindow = 0;
    }
    const full: BrokerRefusal = { ...clip(refusal), at: new Date(now).toISOString() };
    if (this.#inWindow < this.#perSecond) {
      this.#inWindow++;
      this.#emit(full, { ...this.counts });
      return;
    }
    // Held back: the last one goes out when the window turns, with the counts by then.
    this.#held = full;
    this.#timer ??= setTimeout(() => {
      this.#timer = undefined;
      const held = this.#held;
      this.#held = undefined;
      this.#windowStart = Date.now();
      this.#inWindow = 1;
      if (held) this.#emit(held, { ...this.counts });
    }, 1000 - (now - this.#windowStart));
    this.#timer.unref?.();
  }

  stop(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}

function clip(refusal: Omit<BrokerRefusal, 'at'>): Omit<BrokerRefusal, 'at'> {
  const cut = (text: string | undefined) => (text === undefined || text.length <= 200 ? text : `${text.slice(0, 200)}…`);
  const out: Omit<BrokerRefusal, 'at'> = { kind: refusal.kind, reason: refusal.reason };
  if (refusal.identity !== undefined) out.identity = cut(refusal.identity)!;
  if (refusal.clientId !== undefined) out.clientId = cut(refusal.clientId)!;
  if (refusal.topic !== undefined) out.topic = cut(refusal.topic)!;
  return out;
}

/** What the hooks need of an aedes client. */
interface GuardedClient {
  id: string;
  conn: unknown;
  req?: IncomingMessage | undefined;
  _will?: { topic: string } | null;
  close(): void;
}

const ACL = Symbol('acl');
/** Set on a connection granted a filter wider than its read rights: its deliveries are checked. */
const WIDE = Symbol('wide');
type WithAcl = GuardedClient & { [ACL]?: Acl; [WIDE]?: boolean };

type AuthError = Error & { returnCode: 2 | 4 | 5 };
const authError = (returnCode: 2 | 4 | 5, message: string): AuthError => Object.assign(new Error(message), { returnCode });

/**
 * Authentication and ACLs for one broker. `trust(stream)` marks a connection made inside the
 * simulator's process: it is who its client id says.
 */
export class BrokerGuard {
  readonly security: BrokerSecurity;
  readonly refusals: RefusalLog;
  readonly #trusted = new WeakSet<object>();
  readonly #tokens: Map<string, Topics>;
  readonly #locksOf: Map<string, ReadonlySet<string>>;
  readonly #stationUser: RegExp | undefined;
  readonly #stationClientId: { pre: string; post: string } | RegExp;
  readonly #service: PatternAcl;
  readonly #control: PatternAcl;
  readonly #observer: PatternAcl;
  readonly #stationAcls = new Map<string, StationAcl>();

  constructor(security: BrokerSecurity, refusals: RefusalLog) {
    this.security = security;
    this.refusals = refusals;
    this.#tokens = new Map(security.tokens.map((token, index) => [token, security.topicSets[security.topicSetOf[index]!]!]));
    const lockSets = security.lockSets.map((ids) => new Set(ids));
    this.#locksOf = new Map(security.tokens.map((token, index) => [token, lockSets[security.lockSetOf[index]!]!]));
    const user = security.identities.station.username;
    this.#stationUser = user === '{token}' ? undefined : templateRegExp(user);
    const clientId = security.identities.station.clientId ?? DEFAULT_TEMPLATES.station.clientId!;
    const [pre, post, ...more] = clientId.split('{token}');
    // One `{token}` (the usual case) is compared as a prefix and a suffix; more go through a RegExp.
    this.#stationClientId = more.length === 0 && post !== undefined ? { pre: pre!, post } : templateRegExp(clientId);
    const sets = security.topicSets;
    const each = (kind: keyof Omit<Topics, 'prefix'>) => sets.map((t) => levels(fill(t[kind], t.prefix)));
    const stationTopics = [...each('status'), ...each('lockState'), ...each('acks')];
    // The simulator's own namespace (src/contract/sim-topics.ts): only the control identity may touch it.
    const namespace = levels(`${SIM_NAMESPACE}/#`);
    this.#service = new PatternAcl('service', each('unlock'), stationTopics);
    this.#control = new PatternAcl('control', [namespace], [namespace, ...stationTopics, ...each('unlock')]);
    this.#observer = new PatternAcl('observer', [], [...stationTopics, ...each('unlock')]);
  }

  /** A connection made inside the process (the stations' in-memory links). */
  trust(connection: object): void {
    this.#trusted.add(connection);
  }

  /** aedes' `authenticate`. Open brokers let everyone in. */
  authenticate(client: GuardedClient, username: string | undefined, password: Buffer | undefined, done: (error: AuthError | null, ok: boolean) => void): void {
    if (!this.security.auth) return done(null, true);
    void this.#authenticate(client as WithAcl, username, password).then(
      (acl) => {
        (client as WithAcl)[ACL] = acl;
        done(null, true);
      },
      (error: AuthError & { identity?: string }) => {
        this.refusals.add({ kind: 'connect', clientId: client.id, reason: error.message, ...(error.identity ? { identity: error.identity } : {}) });
        done(error, false);
      },
    );
  }

  async #authenticate(client: WithAcl, username: string | undefined, password: Buffer | undefined): Promise<Acl> {
    let who: Who | undefined;
    if (this.#trusted.has(client.conn as object)) {
      // Inside the process: the client id says who it is; a session the fixture does not name is the simulator's own.
      who = this.#byClientId(client.id);
      if (!who) return EVERYTHING;
    } else {
      const tls = peerSocket(client);
      const cert = tls?.getPeerCertificate();
      if (tls && cert && Object.keys(cert).length > 0) {
        if (!tls.authorized) throw authError(5, `client certificate not accepted (${String(tls.authorizationError ?? 'unverified')})`);
        const cn = cert.subject?.CN;
        who = typeof cn === 'string' ? this.#byCertificateName(cn) : undefined;
        if (!who) throw authError(5, 'the client certificate names no identity of the fixture');
      } else {
        who = username === undefined ? undefined : this.#byUsername(username);
        const expected = who ? await this.#secret(who) : undefined;
        // Compared in constant time over fixed-length digests, also when there is nothing to compare with.
        const given = digest(password ?? Buffer.alloc(0));
        const match = timingSafeEqual(given, expected ?? digest(Buffer.from('\u0000no identity'))) && expected !== undefined && password !== undefined;
        if (!who || !match) throw authError(4, username === undefined ? 'no user name or client certificate' : 'bad user name or password');
      }
    }
    const identity = who.role === 'station' ? `station:${who.token}` : who.role;
    if (!this.#clientIdBelongs(who, client.id)) throw Object.assign(authError(2, `client id is not one of ${identity}'s`), { identity });
    // Its own template may be wide (the observer's is any client id): an id that another
    // identity's template names is that identity's, and taking it would end its session and fire
    // its will (MQTT 3.1.1, section 3.1.4). Refused before aedes looks for a session of that id.
    const owner = this.#byClientId(client.id);
    if (owner && !sameIdentity(owner, who)) throw Object.assign(authError(2, `client id is not one of ${identity}'s`), { identity });
    const acl = this.#acl(who, client.id);
    const will = client._will;
    if (will && !acl.canPublish(will.topic)) throw Object.assign(authError(5, `last will on a topic ${identity} may not publish`), { identity });
    return acl;
  }

  #byUsername(username: string): Who | undefined {
    const { identities } = this.security;
    for (const role of ['service', 'control', 'agent', 'observer'] as const) if (identities[role].username === username) return { role };
    const token = this.#stationUser ? this.#stationUser.exec(username)?.groups?.token : username;
    return token !== undefined && this.#tokens.has(token) ? { role: 'station', token } : undefined;
  }

  /**
   * A certificate's CN: a user name first, as Mosquitto's `use_identity_as_username` takes it; else
   * what `station-sim certs` writes (a station's token, `station-sim-service`, `-control`, `-observer`).
   */
  #byCertificateName(cn: string): Who | undefined {
    const byName = this.#byUsername(cn);
    if (byName) return byName;
    if (this.#tokens.has(cn)) return { role: 'station', token: cn };
    for (const role of ['service', 'control', 'agent', 'observer'] as const) if (DEFAULT_TEMPLATES[role].username === cn) return { role };
    return undefined;
  }

  /**
   * Whose client id this is: a station's when it is exactly that station's id, else the identity
   * with the longest template it fits (the template, or the template, `-` and anything), so that
   * `station-sim-api-x` of a station with token `api-x` stays the station's, and a template that
   * extends another (`app` and `app-control`) keeps its own ids. Undefined when no template names
   * it: only an identity without a template of its own (the observer by default) may use it.
   */
  #byClientId(clientId: string): Who | undefined {
    const shape = this.#stationClientId;
    if (shape instanceof RegExp) {
      const token = shape.exec(clientId)?.groups?.token;
      if (token !== undefined && this.#tokens.has(token)) return { role: 'station', token };
    } else if (clientId.length > shape.pre.length + shape.post.length && clientId.startsWith(shape.pre) && clientId.endsWith(shape.post)) {
      const token = clientId.slice(shape.pre.length, clientId.length - shape.post.length);
      if (this.#tokens.has(token)) return { role: 'station', token };
    }
    let owner: Who | undefined;
    let longest = -1;
    for (const role of ['service', 'control', 'agent', 'observer'] as const) {
      const template = this.security.identities[role].clientId;
      if (template === undefined || template.length <= longest) continue;
      if (clientId === template || clientId.startsWith(`${template}-`)) {
        owner = { role };
        longest = template.length;
      }
    }
    return owner;
  }

  #clientIdBelongs(who: Who, clientId: string): boolean {
    const template = this.security.identities[who.role].clientId;
    if (who.role === 'station') return clientId === (template ?? DEFAULT_TEMPLATES.station.clientId!).replaceAll('{token}', who.token);
    return template === undefined || clientId === template || clientId.startsWith(`${template}-`);
  }

  async #secret(who: Who): Promise<Buffer | undefined> {
    const source = this.security.identities[who.role].password;
    if (!source) return undefined;
    const token = who.role === 'station' ? who.token : '';
    let secret: string | undefined;
    if ('env' in source) secret = process.env[source.env.replaceAll('{token}', token)];
    else {
      const file = path.resolve(this.security.baseDir, source.file.replaceAll('{token}', token));
      secret = await readFile(file, 'utf8').then(
        (text) => text.split(/\r?\n/, 1)[0],
        () => undefined,
      );
    }
    return secret === undefined || secret === '' ? undefined : digest(Buffer.from(secret));
  }

  #acl(who: Who, clientId: string): Acl {
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

  /** aedes' `authorizePublish`: a refused PUBLISH closes the connection (MQTT 3.1.1 §3.3.5 allows either that or a silent drop). */
  authorizePublish(client: GuardedClient | null, packet: { topic: string }, done: (error?: Error | null) => void): void {
    const acl = client && (client as WithAcl)[ACL];
    if (!this.security.auth || !client) return done(null);
    if (acl?.canPublish(packet.topic)) return done(null);
    this.refusals.add({ kind: 'publish', clientId: client.id, topic: packet.topic, reason: 'not allowed to publish here', ...(acl ? { identity: acl.identity } : {}) });
    done(new Error('publish not authorized'));
  }

  /**
   * aedes' `authorizeForward`, asked for every message delivered to every client: only a
   * connection granted a wider filter has each message checked against what it may read.
   */
  authorizeForward<P extends { topic: string }>(client: GuardedClient, packet: P): P | null {
    const guarded = client as WithAcl;
    if (guarded[WIDE] !== true) return packet;
    return guarded[ACL]?.canRead?.(packet.topic) === true ? packet : null;
  }

  /** aedes' `authorizeSubscribe`: a refused filter gets 128 in the SUBACK. */
  authorizeSubscribe(client: GuardedClient, sub: { topic: string }, done: (error: Error | null, sub?: unknown) => void): void {
    if (!this.security.auth) return done(null, sub);
    const acl = (client as WithAcl)[ACL];
    if (acl?.canSubscribe(sub.topic)) return done(null, sub);
    if (acl?.overlapsReadable?.(sub.topic)) {
      (client as WithAcl)[WIDE] = true;
      return done(null, sub);
    }
    this.refusals.add({ kind: 'subscribe', clientId: client.id, topic: sub.topic, reason: 'not allowed to subscribe here', ...(acl ? { identity: acl.identity } : {}) });
    done(null, null);
  }
}

function sameIdentity(a: Who, b: Who): boolean {
  return a.role === b.role && (a.role !== 'station' || a.token === (b as { token: string }).token);
}

function templateRegExp(template: string): RegExp {
  // A template may name the token twice: the second time must be the same token.
  const source = template
    .split('{token}')
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .map((part, index) => (index === 0 ? part : `${index === 1 ? '(?<token>.+)' : '\\k<token>'}${part}`))
    .join('');
  return new RegExp(`^${source}$`);
}

function digest(bytes: Buffer): Buffer {
  return createHash('sha256').update(bytes).digest();
}

/** The TLS socket under a connection: the connection itself (mqtts), or under its WebSocket (wss). */
function peerSocket(client: GuardedClient): TLSSocket | undefined {
  const isTls = (socket: unknown): socket is TLSSocket => typeof (socket as TLSSocket | undefined)?.getPeerCertificate === 'function';
  if (isTls(client.conn)) return client.conn;
  if (isTls(client.req?.socket)) return client.req.socket;
  return undefined;
}

/* ---------------------------------------------------------------- packet size */

/**
 * Reads the fixed headers (MQTT 3.1.1 §2.2) of the bytes a connection sends, without buffering
 * them, and says when a packet is larger than `max` bytes, before its body is read. One small
 * state machine per connection; a few comparisons per chunk.
 */
export class PacketSizeGuard {
  readonly #max: number;
  /** Bytes of the current packet's body still to come. */
  #skip = 0;
  /** 0: at a packet's first byte; 1-4: in its remaining length, at that byte. */
  #lengthByte = 0;
  #length = 0;
  #multiplier = 1;

  constructor(max: number) {
    this.#max = max;
  }

  /** False when the bytes hold (the start of) a packet larger than allowed, or a malformed length. */
  feed(bytes: Uint8Array): boolean {
    let at = 0;
    const end = bytes.length;
    while (at < end) {
      if (this.#skip > 0) {
        const take = Math.min(this.#skip, end - at);
        this.#skip -= take;
        at += take;
        continue;
      }
      if (this.#lengthByte === 0) {
        at++; // type and flags
        this.#lengthByte = 1;
        this.#length = 0;
        this.#multiplier = 1;
        continue;
      }
      const byte = bytes[at++]!;
      this.#length += (byte & 0x7f) * this.#multiplier;
      this.#multiplier *= 128;
      if (byte & 0x80) {
        if (++this.#lengthByte > 4) return false;
        continue;
      }
      if (1 + this.#lengthByte + this.#length > this.#max) return false;
      this.#skip = this.#length;
      this.#lengthByte = 0;
    }
    return true;
  }
}
