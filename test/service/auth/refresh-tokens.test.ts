import { expect, test } from 'vitest';
import { RefreshTokens } from '../../../src/service/auth/refresh-tokens.js';
import { ManualClock } from '../support/manual-clock.js';

test('a token works once, until its expiry', () => {
  const clock = new ManualClock();
  const store = new RefreshTokens({ ttlSeconds: 10, clock });
  const token = store.issue({ accountId: 'a', gen: 0 });
  expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
  expect(store.consume(token)).toEqual({ accountId: 'a', gen: 0 });
  expect(store.consume(token)).toBeUndefined();

  const late = store.issue({ accountId: 'a', gen: 0 });
  clock.advance(10_000);
  expect(store.consume(late)).toBeUndefined();
});

test('revoke and revokeAccount forget tokens', () => {
  const store = new RefreshTokens({ ttlSeconds: 10, clock: new ManualClock() });
  const one = store.issue({ accountId: 'a', gen: 0 });
  const two = store.issue({ accountId: 'a', gen: 0 });
  const other = store.issue({ accountId: 'b', gen: 0 });
  store.revoke(one);
  expect(store.consume(one)).toBeUndefined();
  store.revokeAccount('a');
  expect(store.consume(two)).toBeUndefined();
  expect(store.consume(other)).toEqual({ accountId: 'b', gen: 0 });
});

test('expired tokens are swept out as new ones are issued', () => {
  const clock = new ManualClock();
  const store = new RefreshTokens({ ttlSeconds: 10, clock });
  for (let i = 0; i < 5; i += 1) store.issue({ accountId: 'a', gen: 0 });
  expect(store.size).toBe(5);
  clock.advance(60_000);
  store.issue({ accountId: 'a', gen: 0 });
  expect(store.size).toBe(1);
});
