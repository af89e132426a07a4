import { afterEach, beforeEach, expect, test, vi } from 'vitest';
import { PendingCommands } from '../../../src/service/gateway/pending-commands.js';

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

const target = { token: 'S-1', lockId: '1' };

test('an ack settles its wait and removes it', async () => {
  const pending = new PendingCommands();
  const result = pending.wait('c1', target, 1000);
  expect(pending.size).toBe(1);
  expect(pending.settle('S-1', { commandId: 'c1', lockId: '1', accepted: true })).toBe('settled');
  expect(await result).toEqual({ kind: 'ack', ack: { commandId: 'c1', lockId: '1', accepted: true } });
  expect(pending.size).toBe(0);
  expect(vi.getTimerCount()).toBe(0);
});

test('a wait times out exactly at its timeout and leaves no timer', async () => {
  const pending = new PendingCommands();
  let settled: unknown;
  void pending.wait('c1', target, 1000).then((result) => (settled = result));
  await vi.advanceTimersByTimeAsync(999);
  expect(settled).toBeUndefined();
  await vi.advanceTimersByTimeAsync(1);
  expect(settled).toEqual({ kind: 'timeout' });
  expect(pending.size).toBe(0);
  expect(vi.getTimerCount()).toBe(0);
});

test('a late or repeated ack is ignored', async () => {
  const pending = new PendingCommands();
  const result = pending.wait('c1', target, 10);
  await vi.advanceTimersByTimeAsync(10);
  await result;
  expect(pending.settle('S-1', { commandId: 'c1', lockId: '1', accepted: true })).toBe('unexpected');
});

test('an ack from another station or for another lock does not settle the wait', () => {
  const pending = new PendingCommands();
  void pending.wait('c1', target, 1000);
  expect(pending.settle('S-2', { commandId: 'c1', lockId: '1', accepted: true })).toBe('unexpected');
  expect(pending.settle('S-1', { commandId: 'c1', lockId: '2', accepted: true })).toBe('unexpected');
  expect(pending.size).toBe(1);
});

test('cancelAll ends every wait and clears every timer', async () => {
  const pending = new PendingCommands();
  const results = [pending.wait('a', target, 1000), pending.wait('b', target, 5000)];
  pending.cancelAll();
  expect(await Promise.all(results)).toEqual([{ kind: 'cancelled' }, { kind: 'cancelled' }]);
  expect(pending.size).toBe(0);
  expect(vi.getTimerCount()).toBe(0);
});

test('injected timers are used', () => {
  const calls: number[] = [];
  const pending = new PendingCommands({ setTimeout: (_callback, ms) => calls.push(ms), clearTimeout: () => {} });
  void pending.wait('c1', target, 1234);
  expect(calls).toEqual([1234]);
});

test('an ack is believed once: a second, contradicting ack is a duplicate and changes nothing', async () => {
  const pending = new PendingCommands();
  const result = pending.wait('c1', target, 1000);
  expect(pending.settle('S-1', { commandId: 'c1', lockId: '1', accepted: true })).toBe('settled');
  expect(pending.settle('S-1', { commandId: 'c1', lockId: '1', accepted: false, reason: 'jammed' })).toBe('duplicate');
  expect(await result).toEqual({ kind: 'ack', ack: { commandId: 'c1', lockId: '1', accepted: true } });
});
