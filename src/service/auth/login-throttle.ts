/**
 * Login throttling (docs/api.md, section 5, "Login throttling"). A flood of wrong guesses used to
 * get one 401 each, and each cost a full scrypt hash; now it is refused with 429 before any hashing.
 *
 * Two independent limits, both counting failed logins only (a test suite that logs in often with
 * the right password never meets them):
 * - per client address (IPv4, or IPv6 grouped by /64, which one host usually holds whole): a budget
 *   of `maxFailures` failures that refills evenly over `windowSeconds` (a token bucket). An address
 *   can fail `maxFailures` times in a burst and then once per `windowSeconds / maxFailures` on
 *   average. A success does not refill it: an attacker holding one valid account could otherwise
 *   refill its budget between guesses at other accounts.
 * - per account, keyed by the normalised email whether or not an account has it (so the answer
 *   does not reveal which emails exist): after `freeFailures` failures, each further failure locks
 *   the email for `lockoutSeconds`, doubled per failure, capped at `maxLockoutSeconds`. A success
 *   resets it; failures are forgotten after `forgetAfterSeconds` without one.
 *
 * Memory is bounded: each table keeps at most `maxTracked` keys, the one that failed least recently dropped
 * first (a `Map` kept in order of last failure), so a spray of addresses or emails cannot grow it.
 * Time comes from the injected `ServiceClock`, so tests run in fake time.
 */
import { isIPv4, isIPv6 } from 'node:net';
import type { LoginThrottleSettings } from '../../fixture/fixture-schema.js';
import type { ServiceClock } from '../service-clock.js';

/** What `check` found: go ahead, or wait this many whole seconds (at least 1). */
export type ThrottleVerdict = { allowed: true } | { allowed: false; retryAfterSeconds: number };

interface AddressBudget {
  /** Failures the address may still make now (fractional while it refills). */
  tokens: number;
  updatedAt: number;
  lastFailureAt: number;
}

interface AccountRecord {
  failures: number;
  lastFailureAt: number;
  /** No login for the email before this time (ms since the epoch). */
  lockedUntil: number;
}

export class LoginThrottle {
  readonly #settings: LoginThrottleSettings;
  readonly #clock: ServiceClock;
  readonly #addresses = new Map<string, AddressBudget>();
  readonly #accounts = new Map<string, AccountRecord>();

  constructor(settings: LoginThrottleSettings, clock: ServiceClock) {
    this.#settings = settings;
    this.#clock = clock;
  }

  get enabled(): boolean {
    return this.#settings.enabled;
  }

  /** Keys remembered, per table (for tests of the memory bound). */
  get size(): { addresses: number; accounts: number } {
    return { addresses: this.#addresses.size, accounts: this.#accounts.size };
  }

  /**
   * Whether a login for `accountKey` from `address` may be checked now. Changes nothing but
   * forgets what has expired. When both limits refuse, the later of the two times is given.
   */
  check(accountKey: string, address: string): ThrottleVerdict {
    if (!this.#settings.enabled) return { allowed: true };
    const now = this.#clock.now();
    let waitMs = 0;
    const budget = this.#currentBudget(addressKey(address), now);
    if (budget && budget.tokens < 1) waitMs = ((1 - budget.tokens) * this.#refillMsPerFailure());
    const account = this.#currentAccount(accountKey, now);
    if (account && account.lockedUntil > now) waitMs = Math.max(waitMs, account.lockedUntil - now);
    return waitMs > 0 ? { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)) } : { allowed: true };
  }

  /** Counts a failed login against both the address and the email. */
  recordFailure(accountKey: string, address: string): void {
    if (!this.#settings.enabled) return;
    const now = this.#clock.now();
    const key = addressKey(address);
    const budget = this.#currentBudget(key, now) ?? { tokens: this.#settings.perAddress.maxFailures, updatedAt: now, lastFailureAt: now };
    budget.tokens = Math.max(0, budget.tokens - 1);
    budget.lastFailureAt = now;
    remember(this.#addresses, key, budget, this.#settings.maxTracked);

    const { freeFailures, lockoutSeconds, maxLockoutSeconds } = this.#settings.perAccount;
    const account = this.#currentAccount(accountKey, now) ?? { failures: 0, lastFailureAt: now, lockedUntil: 0 };
    account.failures += 1;
    account.lastFailureAt = now;
    const over = account.failures - freeFailures;
    if (over > 0) {
      // 2^(over-1) grows past any cap long before it overflows; the exponent is bounded anyway.
      const lockoutMs = Math.min(lockoutSeconds * 2 ** Math.min(over - 1, 40), maxLockoutSeconds) * 1000;
      account.lockedUntil = now + lockoutMs;
    }
    remember(this.#accounts, accountKey, account, this.#settings.maxTracked);
  }

  /**
   * Whether the address failed a login within the last `windowSeconds` (false with throttling off).
   * The password checks put such addresses last in line (hash-limiter.ts).
   */
  failedRecently(address: string): boolean {
    if (!this.#settings.enabled) return false;
    return this.#currentBudget(addressKey(address), this.#clock.now()) !== undefined;
  }

  /** A successful login: the email's failures are forgotten (the address's budget is not refilled). */
  recordSuccess(accountKey: string): void {
    this.#accounts.delete(accountKey);
  }

  #refillMsPerFailure(): number {
    const { maxFailures, windowSeconds } = this.#settings.perAddress;
    return (windowSeconds * 1000) / maxFailures;
  }

  /**
   * The address's budget refilled up to now; undefined (and forgotten) once it is full again and
   * its last failure is a window old.
   */
  #currentBudget(key: string, now: number): AddressBudget | undefined {
    const budget = this.#addresses.get(key);
    if (!budget) return undefined;
    const { maxFailures } = this.#settings.perAddress;
    budget.tokens = Math.min(maxFailures, budget.tokens + Math.max(0, now - budget.updatedAt) / this.#refillMsPerFailure());
    budget.updatedAt = now;
    if (budget.tokens >= maxFailures && now - budget.lastFailureAt >= this.#settings.perAddress.windowSeconds * 1000) {
      this.#addresses.delete(key);
      return undefined;
    }
    return budget;
  }

  /** The email's record; undefined (and forgotten) once its failures are old enough to forget. */
  #currentAccount(key: string, now: number): AccountRecord | undefined {
    const account = this.#accounts.get(key);
    if (!account) return undefined;
    const forgetAt = Math.max(account.lockedUntil, account.lastFailureAt + this.#settings.perAccount.forgetAfterSeconds * 1000);
    if (now >= forgetAt) {
      this.#accounts.delete(key);
      return undefined;
    }
    return account;
  }
}

/** Puts `key` last (most recently used), dropping the least recently used keys past `limit`. */
function remember<V>(table: Map<string, V>, key: string, value: V, limit: number): void {
  table.delete(key);
  table.set(key, value);
  while (table.size > limit) {
    const oldest = table.keys().next().value;
    if (oldest === undefined) break;
    table.delete(oldest);
  }
}

/**
 * The key of a client address: an IPv4 address as it is (an IPv4-mapped IPv6 address, as a
 * dual-stack socket reports IPv4 clients, included), an IPv6 address as its /64 prefix, since one
 * host or one customer usually gets a whole /64 and could otherwise step through it. Anything else
 * (a Unix socket has no address) is its own key.
 */
export function addressKey(address: string): string {
  const unzoned = address.split('%')[0]!;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(unzoned);
  if (mapped && isIPv4(mapped[1]!)) return mapped[1]!;
  if (isIPv4(unzoned) || !isIPv6(unzoned)) return unzoned;
  return `${expandIPv6(unzoned).slice(0, 4).join(':')}::/64`;
}

/** The eight 16-bit groups of a valid IPv6 address, in lower-case hex without leading zeros. */
function expandIPv6(address: string): string[] {
  let text = address.toLowerCase();
  // A trailing dotted IPv4 part is two groups.
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const fill = tail === undefined ? [] : new Array<string>(8 - left.length - right.length).fill('0');
  return [...left, ...fill, ...right].map((group) => Number.parseInt(group, 16).toString(16));
}
