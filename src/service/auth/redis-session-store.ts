/**
 * Sessions in Redis, shared by every API process that names the same server and key prefix, and
 * kept across restarts of the API (docs/api.md, "Session store"). Only SHA-256 hashes of refresh
 * tokens are stored, and every key has a TTL, so Redis forgets by itself what no token can use.
 *
 * Keys (`P` is the prefix, `station-sim:` by default):
 * - `P rt:{hash}`   a live refresh token: hash { sid, acc, gen, exp }, until `exp`
 * - `P used:{hash}` a consumed one: "{sid} {acc}", until its family is forgotten (reuse detection)
 * - `P fam:{sid}`   a family: hash { acc, end, revoked }, until its newest refresh token expires,
 *                   plus an access token lifetime
 * - `P gen:{acc}`   the account's revocation generation, for as long as a token older than it can live
 * - channel `P revocations`: "g {gen} {acc}" after a revoke-all, "f {sid}" after a family is revoked
 *
 * Consuming a refresh token is one Lua script, so of two processes consuming the same token
 * exactly one gets it. The scripts touch keys they compute from the prefix, which a single
 * server (or a primary with replicas) allows and Redis Cluster does not: cluster is not supported.
 *
 * The hot path. Checking an access token needs its account's generation and its family's state.
 * Reading them from Redis on every request would add a round trip to each; instead both are
 * cached in this process and kept fresh by the revocation channel, which every revocation
 * publishes to from inside its script (so no revocation is written without being published).
 * A cache entry is filled from Redis on first use, then trusted. Entries only ever move one way (a
 * generation up, a family to revoked), so a fill and a message crossing each other merge to the
 * newer state. While the subscriber connection is down, messages may be lost: the cache is
 * emptied and not used until the subscription is back (emptied again then), and every check reads
 * Redis, which answers or fails with `SESSION_STORE_UNAVAILABLE` (503). The one window left is the
 * delivery of a message: another process rejects a revoked token once the message has reached it,
 * well under a millisecond on one host; the process that revoked rejects it at once.
 */
import { Redis, type RedisOptions } from 'ioredis';
import { SimError } from '../../errors.js';
import { redactUrl } from '../../shared/redact-url.js';
import { isStateUrl, STATE_URL_WANTS } from './state-url.js';
import type { ServiceClock } from '../service-clock.js';
import type { AccessSession, ConsumeOutcome, NewFamily, RefreshRecord, SessionStore } from './session-store.js';

/** Prefix of every key and of the channel. */
export const DEFAULT_KEY_PREFIX = 'station-sim:';
/** A command without an answer within this time fails (503) instead of holding the request. */
export const DEFAULT_COMMAND_TIMEOUT_MS = 2000;
/** Cached family states at most; past it the oldest are dropped (and read again when needed). */
const MAX_CACHED_FAMILIES = 100_000;
/** Reconnection backoff: 50 ms more per attempt, at most this, so recovery is quick once Redis is back. */
const MAX_RECONNECT_DELAY_MS = 1000;

export interface RedisSessionStoreOptions {
  /** `redis://[[user]:password@]host[:port][/db]`, or `rediss://` for TLS. */
  url: string;
  clock: ServiceClock;
  /** How long a generation is kept after the revoke-all that set it: the longest any token issued before it may live (ms). */
  generationRetentionMs: number;
  /** Prefix of every key and of the channel, so several simulators can share one Redis. @default "station-sim:" */
  keyPrefix?: string;
  /** @default 2000 */
  commandTimeoutMs?: number;
  /** Told when the connection to Redis is lost and when it is back. */
  onNotice?: (message: string) => void;
}

const CONSUME = `
local rec = redis.call('HMGET', KEYS[1], 'sid', 'acc', 'gen', 'exp')
if not rec[1] then
  local used = redis.call('GET', KEYS[2])
  if used then return {'reused', used} end
  return {'unknown'}
end
redis.call('DEL', KEYS[1])
local fam = ARGV[1] .. 'fam:' .. rec[1]
local f = redis.call('HMGET', fam, 'acc', 'end', 'revoked')
local ttl = redis.call('PTTL', fam)
if ttl > 0 then redis.call('SET', KEYS[2], rec[1] .. ' ' .. rec[2], 'PX', ttl) end
local gen = redis.call('GET', ARGV[1] .. 'gen:' .. rec[2])
return {'consumed', rec[1], rec[2], rec[3], rec[4], f[1] or '', f[2] or '', f[3] or '', gen or '0'}
`;

const REVOKE_FAMILY = `
if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('HSET', KEYS[1], 'revoked', '1') end
redis.call('PUBLISH', ARGV[1], 'f ' .. ARGV[2])
return 1
`;

const BUMP_GENERATION = `
local n = redis.call('INCR', KEYS[1])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('PUBLISH', ARGV[1], 'g ' .. n .. ' ' .. ARGV[2])
return n
`;

const ACCESS_STATE = `
return {redis.call('GET', KEYS[1]) or '0', redis.call('HGET', KEYS[2], 'acc') or '', redis.call('HGET', KEYS[2], 'revoked') or ''}
`;

/** The scripts, as ioredis' `defineCommand` adds them (EVALSHA, falling back to EVAL once). */
interface Scripts {
  ssConsume(rt: string, used: string, prefix: string): Promise<string[]>;
  ssRevokeFamily(fam: string, channel: string, sid: string): Promise<number>;
  ssBumpGeneration(gen: string, channel: string, accountId: string, retentionMs: number): Promise<number>;
  ssAccessState(gen: string, fam: string): Promise<[string, string, string]>;
}
type ScriptedRedis = Redis & Scripts;

/** Connects to Redis (both connections) and subscribes; a Redis that cannot be reached fails the start with one line. */
export async function connectRedisSessionStore(options: RedisSessionStoreOptions): Promise<RedisSessionStore> {
  if (!isStateUrl(options.url)) throw new SimError('BAD_REQUEST', `state must be ${STATE_URL_WANTS}, not "${redactUrl(options.url)}"`);
  const timeout = options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS;
  const settings: RedisOptions = {
    lazyConnect: true,
    // Fail at once while disconnected instead of queueing: a request waits at most one timeout.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: timeout,
    connectTimeout: timeout,
    autoResubscribe: false,
    retryStrategy: (times) => Math.min(times * 50, MAX_RECONNECT_DELAY_MS),
  };
  const client = new Redis(options.url, settings) as ScriptedRedis;
  const subscriber = new Redis(options.url, settings);
  client.defineCommand('ssConsume', { numberOfKeys: 2, lua: CONSUME });
  client.defineCommand('ssRevokeFamily', { numberOfKeys: 1, lua: REVOKE_FAMILY });
  client.defineCommand('ssBumpGeneration', { numberOfKeys: 1, lua: BUMP_GENERATION });
  client.defineCommand('ssAccessState', { numberOfKeys: 2, lua: ACCESS_STATE });
  const store = new RedisSessionStore(client, subscriber, options);
  try {
    await Promise.all([client.connect(), subscriber.connect()]);
    await store.subscribed();
  } catch (error) {
    await store.close();
    throw new SimError('SESSION_STORE_UNAVAILABLE', `cannot reach the session store at ${redactUrl(options.url)}: ${reason(error)}`, { cause: error });
  }
  // From here on a lost connection is news; before, the start failure says it all.
  store.announceChanges();
  return store;
}

export class RedisSessionStore implements SessionStore {
  readonly #client: ScriptedRedis;
  readonly #subscriber: Redis;
  readonly #clock: ServiceClock;
  readonly #prefix: string;
  readonly #channel: string;
  readonly #generationRetentionMs: number;
  readonly #notice: (message: string) => void;
  /** Account → generation, trusted only while `#trusted`. */
  readonly #generations = new Map<string, number>();
  /** Family → dead (revoked, gone, or of another account), trusted only while `#trusted`. */
  readonly #deadFamilies = new Map<string, boolean>();
  /** The subscription is up: no revocation can have been missed since the caches were emptied. */
  #trusted = false;
  /** Bumped whenever the caches are emptied, so a read that started before does not refill them. */
  #epoch = 0;
  #subscribedOnce: Promise<void>;
  #closed = false;
  #lost = false;
  #announcing = false;

  /** Use `connectRedisSessionStore`. */
  constructor(client: ScriptedRedis, subscriber: Redis, options: RedisSessionStoreOptions) {
    this.#client = client;
    this.#subscriber = subscriber;
    this.#clock = options.clock;
    this.#prefix = options.keyPrefix ?? DEFAULT_KEY_PREFIX;
    this.#channel = `${this.#prefix}revocations`;
    this.#generationRetentionMs = options.generationRetentionMs;
    this.#notice = options.onNotice ?? (() => undefined);
    // Without listeners ioredis prints every connection error itself; the state is reported once
    // per loss and return below.
    client.on('error', () => undefined);
    subscriber.on('error', () => undefined);
    client.on('close', () => this.#connectionLost());
    subscriber.on('close', () => {
      this.#distrust();
      this.#connectionLost();
    });
    subscriber.on('message', (channel: string, message: string) => {
      if (channel === this.#channel) this.#apply(message);
    });
    let resolveFirst: () => void = () => undefined;
    let rejectFirst: (error: unknown) => void = () => undefined;
    this.#subscribedOnce = new Promise((resolve, reject) => {
      resolveFirst = resolve;
      rejectFirst = reject;
    });
    subscriber.on('ready', () => {
      subscriber.subscribe(this.#channel).then(
        () => {
          if (this.#closed) return;
          this.#distrust(); // anything cached before the subscription may have missed a message
          this.#trusted = true;
          resolveFirst();
          if (this.#lost && client.status === 'ready') this.#back();
        },
        (error: unknown) => {
          rejectFirst(error);
          // After the start, a subscription that failed is tried again on a fresh connection:
          // until it succeeds the caches stay unused and every check reads Redis.
          if (this.#announcing && !this.#closed) subscriber.disconnect(true);
        },
      );
    });
    // Awaited by connectRedisSessionStore; a failure after that one has nobody to hear it.
    this.#subscribedOnce.catch(() => undefined);
    client.on('ready', () => {
      if (this.#lost && this.#trusted) this.#back();
    });
  }

  /** Reports a lost connection, and its return, from now on. @internal */
  announceChanges(): void {
    this.#announcing = true;
  }

  /** Resolves once the revocation channel is subscribed the first time. */
  subscribed(): Promise<void> {
    return this.#subscribedOnce;
  }

  /** Whether the in-process caches are in use (the revocation channel is subscribed). For tests. */
  get cacheTrusted(): boolean {
    return this.#trusted;
  }

  async generation(accountId: string): Promise<number> {
    const value = await this.#run(() => this.#client.get(this.#key('gen:', accountId)));
    return value === null ? 0 : Number(value);
  }

  async startFamily(sid: string, family: NewFamily, first: { hash: string; record: RefreshRecord }): Promise<void> {
    const fam = this.#key('fam:', sid);
    await this.#run(() =>
      this.#client
        .multi()
        .hset(fam, { acc: family.accountId, end: String(family.endsAt), revoked: '0' })
        .pexpire(fam, this.#ttl(family.keepUntil))
        .hset(this.#key('rt:', first.hash), recordFields(first.record))
        .pexpire(this.#key('rt:', first.hash), this.#ttl(first.record.expiresAt))
        .exec()
        .then(checkExec),
    );
  }

  async saveRefresh(hash: string, record: RefreshRecord, familyKeepUntil: number): Promise<void> {
    const key = this.#key('rt:', hash);
    await this.#run(() =>
      this.#client
        .multi()
        .hset(key, recordFields(record))
        .pexpire(key, this.#ttl(record.expiresAt))
        // PEXPIRE leaves a missing key missing: a family forgotten meanwhile stays forgotten.
        .pexpire(this.#key('fam:', record.sid), this.#ttl(familyKeepUntil))
        .exec()
        .then(checkExec),
    );
  }

  async consumeRefresh(hash: string): Promise<ConsumeOutcome> {
    const reply = await this.#run(() => this.#client.ssConsume(this.#key('rt:', hash), this.#key('used:', hash), this.#prefix));
    if (reply[0] === 'reused') {
      const used = reply[1] ?? '';
      const space = used.indexOf(' ');
      return { outcome: 'reused', sid: used.slice(0, space), accountId: used.slice(space + 1) };
    }
    if (reply[0] !== 'consumed') return { outcome: 'unknown' };
    const [, sid = '', accountId = '', gen = '0', expiresAt = '0', familyAccount = '', endsAt = '0', revoked = '', generation = '0'] = reply;
    return {
      outcome: 'consumed',
      record: { sid, accountId, gen: Number(gen), expiresAt: Number(expiresAt) },
      family: familyAccount === '' ? undefined : { accountId: familyAccount, endsAt: Number(endsAt), revoked: revoked === '1' },
      generation: Number(generation),
    };
  }

  async revokeFamily(sid: string): Promise<void> {
    await this.#run(() => this.#client.ssRevokeFamily(this.#key('fam:', sid), this.#channel, sid));
    // This process rejects the family's tokens at once, without waiting for its own message.
    this.#deadFamilies.set(sid, true);
  }

  async bumpGeneration(accountId: string): Promise<number> {
    const next = await this.#run(() => this.#client.ssBumpGeneration(this.#key('gen:', accountId), this.#channel, accountId, this.#generationRetentionMs));
    this.#raiseGeneration(accountId, next);
    return next;
  }

  isAccessLive(session: AccessSession): boolean | Promise<boolean> {
    if (this.#trusted) {
      const generation = this.#generations.get(session.sub);
      const dead = this.#deadFamilies.get(session.sid);
      if (generation !== undefined && dead !== undefined) return !dead && generation === session.gen;
    }
    return this.#readAccess(session);
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#distrust();
    // disconnect(), not quit(): quit waits for an answer a lost server never gives.
    this.#client.disconnect();
    this.#subscriber.disconnect();
  }

  async #readAccess(session: AccessSession): Promise<boolean> {
    const epoch = this.#epoch;
    const [generation, familyAccount, revoked] = await this.#run(() =>
      this.#client.ssAccessState(this.#key('gen:', session.sub), this.#key('fam:', session.sid)),
    );
    // A family that is gone is dead: its tokens have expired, or Redis lost its data (fail closed).
    const dead = familyAccount !== session.sub || revoked === '1';
    if (this.#trusted && epoch === this.#epoch) {
      this.#raiseGeneration(session.sub, Number(generation));
      this.#markFamily(session.sid, dead);
    }
    return !dead && Number(generation) === session.gen;
  }

  #apply(message: string): void {
    const [kind, first = '', ...rest] = message.split(' ');
    if (kind === 'f') this.#markFamily(first, true);
    else if (kind === 'g') this.#raiseGeneration(rest.join(' '), Number(first));
  }

  #raiseGeneration(accountId: string, generation: number): void {
    if (!Number.isFinite(generation)) return;
    this.#generations.set(accountId, Math.max(this.#generations.get(accountId) ?? 0, generation));
  }

  #markFamily(sid: string, dead: boolean): void {
    if (this.#deadFamilies.size >= MAX_CACHED_FAMILIES && !this.#deadFamilies.has(sid)) {
      const oldest = this.#deadFamilies.keys().next().value;
      if (oldest !== undefined) this.#deadFamilies.delete(oldest);
    }
    this.#deadFamilies.set(sid, dead || this.#deadFamilies.get(sid) === true);
  }

  #distrust(): void {
    this.#trusted = false;
    this.#epoch += 1;
    this.#generations.clear();
    this.#deadFamilies.clear();
  }

  #connectionLost(): void {
    if (this.#closed || this.#lost || !this.#announcing) return;
    this.#lost = true;
    this.#notice('the session store (Redis) is unreachable: the auth and station routes answer 503 until it is back');
  }

  #back(): void {
    this.#lost = false;
    this.#notice('the session store (Redis) is back');
  }

  async #run<T>(command: () => Promise<T>): Promise<T> {
    try {
      return await command();
    } catch (error) {
      throw new SimError('SESSION_STORE_UNAVAILABLE', undefined, { cause: error });
    }
  }

  #key(kind: string, id: string): string {
    return `${this.#prefix}${kind}${id}`;
  }

  /** A TTL from an expiry on the service clock: relative, so a test's clock set in the past or the future still gives the key its due life. */
  #ttl(expiresAt: number): number {
    return Math.max(1, Math.ceil(expiresAt - this.#clock.now()));
  }
}

function recordFields(record: RefreshRecord): Record<string, string> {
  return { sid: record.sid, acc: record.accountId, gen: String(record.gen), exp: String(record.expiresAt) };
}

/** MULTI answers each command's error in its slot instead of rejecting. */
function checkExec(results: [Error | null, unknown][] | null): void {
  if (results === null) throw new Error('transaction aborted');
  for (const [error] of results) if (error) throw error;
}

function reason(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message === '' ? 'no answer' : message;
}
