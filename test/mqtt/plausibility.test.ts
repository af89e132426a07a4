import { describe, expect, it } from 'vitest';
import { PLAUSIBILITY_LIMITS, checkAck, checkLockState, checkStatus, plausibleTimestamp } from '../../src/mqtt/plausibility.js';

const now = Date.parse('2026-06-01T12:00:00.000Z');

describe('plausibleTimestamp', () => {
  it.each([
    ['2026-06-01T12:00:00Z', true],
    ['2026-06-01T12:00:00.5Z', true],
    ['2026-06-01T12:05:00.000Z', true], // at the skew
    ['2026-06-01T12:05:00.001Z', false], // beyond it
    ['2026-06-01T12:00:00+00:00', false],
    ['2026-06-01 12:00:00Z', false],
    ['2026-02-30T12:00:00Z', false], // no such day (Date.parse would roll it over to March 2nd)
    ['2026-13-01T12:00:00Z', false],
    ['<script>', false],
  ])('%s → %s', (value, expected) => {
    expect(plausibleTimestamp(value, now)).toBe(expected);
  });
});

describe('checks', () => {
  const status = { stationId: 7, status: 'online' as const, batteryVoltage: 12.4, lastConnection: '2026-06-01T11:00:00.000Z' };
  it('a status', () => {
    expect(checkStatus(status, { stationId: 7 }, now)).toBeUndefined();
    expect(checkStatus({ ...status, stationId: 8 }, { stationId: 7 }, now)).toBe('wrongStation');
    expect(checkStatus({ ...status, batteryVoltage: 100.01 }, { stationId: 7 }, now)).toBe('outOfRange');
    expect(checkStatus({ ...status, batteryVoltage: 100 }, { stationId: 7 }, now)).toBeUndefined();
  });
  it('a lock state', () => {
    const state = { lockId: '1', status: 'locked' as const, lastUpdated: '2026-06-01T11:00:00.000Z' };
    expect(checkLockState(state, '1', true, now)).toBeUndefined();
    expect(checkLockState(state, '1', false, now)).toBe('unknownLock');
    expect(checkLockState({ ...state, lockId: '../x' }, '../x', false, now)).toBe('unknownLock');
    expect(checkLockState({ ...state, lockId: 'x'.repeat(PLAUSIBILITY_LIMITS.maxStringLength + 1) }, 'x', true, now)).toBe('malformed');
  });
  it('an ack', () => {
    expect(checkAck({ commandId: 'c', lockId: '1', accepted: false, reason: 'jammed' })).toBeUndefined();
    expect(checkAck({ commandId: 'c', lockId: '1', accepted: false, reason: 'r'.repeat(65) })).toBe('malformed');
  });
});
