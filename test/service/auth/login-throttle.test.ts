/** The login throttle on its own, in fake time (ManualClock): budgets, lockouts, memory bound, address keys. */
import { describe, expect, test } from 'vitest';
import type { LoginThrottleSettings } from '../../../src/fixture/fixture-schema.js';
import { LoginThrottle, addressKey } from '../../../src/service/auth/login-throttle.js';
import { ManualClock } from '../../../src/shared/clock.js';

const SETTINGS: LoginThrottleSettings = {
  enabled: true,
  perAddress: { maxFailures: 10, windowSeconds: 60 },
  perAccount: { freeFailures: 3, lockoutSeconds: 2, maxLockoutSeconds: 30, forgetAfterSeconds: 600 },
  maxTracked: 100,
};

function throttle(settings: Partial<LoginThrottleSettings> = {}) {
  const clock = new ManualClock();
  return { clock, throttle: new LoginThrottle({ ...SETTINGS, ...settings }, clock) };
}

describe('per client address', () => {
  test('allows maxFailures failures, then refuses until one failure has refilled', () => {
    const { clock, throttle: guard } = throttle();
    for (let n = 0; n < 10; n += 1) {
      expect(guard.check(`user${n}@example.com`, '192.0.2.1')).toEqual({ allowed: true });
      guard.recordFailure(`user${n}@example.com`, '192.0.2.1');
    }
    // One failure refills every 60 s / 10 = 6 s.
    expect(guard.check('fresh@example.com', '192.0.2.1')).toEqual({ allowed: false, retryAfterSeconds: 6 });
    expect(guard.check('fresh@example.com', '192.0.2.2')).toEqual({ allowed: true });
    clock.advance(5_500);
    expect(guard.check('fresh@example.com', '192.0.2.1')).toEqual({ allowed: false, retryAfterSeconds: 1 });
    clock.advance(500);
    expect(guard.check('fresh@example.com', '192.0.2.1')).toEqual({ allowed: true });
    guard.recordFailure('fresh@example.com', '192.0.2.1');
    expect(guard.check('other@example.com', '192.0.2.1')).toEqual({ allowed: false, retryAfterSeconds: 6 });
    // After the whole window the budget is full again, and forgotten.
    clock.advance(60_000);
    expect(guard.check('other@example.com', '192.0.2.1')).toEqual({ allowed: true });
    expect(guard.size.addresses).toBe(0);
  });

  test('a success refills nothing: one valid account cannot buy guesses at others', () => {
    const { throttle: guard } = throttle();
    for (let n = 0; n < 10; n += 1) guard.recordFailure(`victim${n}@example.com`, '192.0.2.1');
    guard.recordSuccess('mine@example.com');
    expect(guard.check('victim0@example.com', '192.0.2.1').allowed).toBe(false);
  });

  test('IPv6 addresses of one /64 share a budget; IPv4-mapped addresses count as IPv4', () => {
    const { throttle: guard } = throttle();
    for (let n = 0; n < 10; n += 1) guard.recordFailure('a@example.com', `2001:db8:1:2::${(n + 1).toString(16)}`);
    expect(guard.check('b@example.com', '2001:db8:1:2:ffff:ffff:ffff:ffff').allowed).toBe(false);
    expect(guard.check('b@example.com', '2001:db8:1:3::1').allowed).toBe(true);
    expect(addressKey('2001:DB8:1:2::7')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:db8:0001:0002:0:0:0:7')).toBe('2001:db8:1:2::/64');
    expect(addressKey('::1')).toBe('0:0:0:0::/64');
    expect(addressKey('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
    expect(addressKey('::ffff:192.0.2.1')).toBe('192.0.2.1');
    expect(addressKey('64:ff9b::192.0.2.1')).toBe('64:ff9b:0:0::/64');
    expect(addressKey('127.0.0.1')).toBe('127.0.0.1');
  });
});

describe('per account', () => {
  test('locks the email after freeFailures, doubling per failure up to the cap, from any address', () => {
    const { clock, throttle: guard } = throttle({ perAddress: { maxFailures: 1000, windowSeconds: 60 } });
    const fail = (n: number) => guard.recordFailure('Alice@example.com'.toLowerCase(), `198.51.100.${n}`);
    for (let n = 0; n < 3; n += 1) fail(n);
    expect(guard.check('alice@example.com', '203.0.113.9')).toEqual({ allowed: true });
    const lockouts: number[] = [];
    for (let n = 3; n < 9; n += 1) {
      fail(n);
      const verdict = guard.check('alice@example.com', '203.0.113.9');
      expect(verdict.allowed).toBe(false);
      lockouts.push(verdict.allowed ? 0 : verdict.retryAfterSeconds);
      clock.advance(lockouts.at(-1)! * 1000);
      expect(guard.check('alice@example.com', '203.0.113.9')).toEqual({ allowed: true });
    }
    expect(lockouts).toEqual([2, 4, 8, 16, 30, 30]);
    expect(guard.check('bob@example.com', '203.0.113.9')).toEqual({ allowed: true });
  });

  test('a success resets the email; failures are forgotten after forgetAfterSeconds', () => {
    const { clock, throttle: guard } = throttle();
    for (let n = 0; n < 3; n += 1) guard.recordFailure('alice@example.com', '192.0.2.1');
    guard.recordSuccess('alice@example.com');
    guard.recordFailure('alice@example.com', '192.0.2.1');
    expect(guard.check('alice@example.com', '192.0.2.1')).toEqual({ allowed: true });
    for (let n = 0; n < 2; n += 1) guard.recordFailure('bob@example.com', '192.0.2.1');
    clock.advance(600_000);
    guard.recordFailure('bob@example.com', '192.0.2.1');
    expect(guard.check('bob@example.com', '192.0.2.1')).toEqual({ allowed: true });
  });
});

test('a spray of different emails from one address is throttled by the address', () => {
  const { throttle: guard } = throttle();
  let allowed = 0;
  for (let n = 0; n < 500; n += 1) {
    const email = `spray${n}@example.com`;
    if (!guard.check(email, '192.0.2.77').allowed) continue;
    allowed += 1;
    guard.recordFailure(email, '192.0.2.77');
  }
  expect(allowed).toBe(10);
});

test('memory stays within maxTracked however many addresses and emails fail', () => {
  const { throttle: guard } = throttle();
  for (let n = 0; n < 5000; n += 1) guard.recordFailure(`spray${n}@example.com`, `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`);
  expect(guard.size).toEqual({ addresses: 100, accounts: 100 });
  // The most recent are the ones kept.
  for (let n = 0; n < 9; n += 1) guard.recordFailure('last@example.com', '10.0.19.135');
  expect(guard.check('x@example.com', '10.0.19.135').allowed).toBe(false);
});

test('enabled: false lets everything through and remembers nothing', () => {
  const { throttle: guard } = throttle({ enabled: false });
  for (let n = 0; n < 100; n += 1) guard.recordFailure('alice@example.com', '192.0.2.1');
  expect(guard.check('alice@example.com', '192.0.2.1')).toEqual({ allowed: true });
  expect(guard.size).toEqual({ addresses: 0, accounts: 0 });
});

test('an address that failed within the window counts as failing recently, after its budget has refilled too', () => {
  const { clock, throttle: guard } = throttle();
  expect(guard.failedRecently('192.0.2.1')).toBe(false);
  guard.recordFailure('a@example.com', '192.0.2.1');
  clock.advance(59_000);
  expect(guard.check('a@example.com', '192.0.2.1')).toEqual({ allowed: true });
  expect(guard.failedRecently('192.0.2.1')).toBe(true);
  clock.advance(1000);
  expect(guard.failedRecently('192.0.2.1')).toBe(false);
  expect(guard.size.addresses).toBe(0);
});
