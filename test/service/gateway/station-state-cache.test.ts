import { expect, test } from 'vitest';
import { NEVER_REPORTED, StationStateCache } from '../../../src/service/gateway/station-state-cache.js';
import { testFixture } from '../../helpers/test-fixture.js';

const config = testFixture().stations.find((station) => station.token === 'S-1')!;
const at = '2026-03-01T10:00:00.000Z';

test('before anything is published: offline, fixture values, epoch timestamps', () => {
  const cache = new StationStateCache();
  expect(cache.view(config, true)).toEqual({
    stationId: 1,
    batteryVoltage: 12.4,
    lastConnection: NEVER_REPORTED,
    status: 'offline',
    locks: [
      { lockId: '1', status: 'locked', lastUpdated: NEVER_REPORTED },
      { lockId: '2', status: 'locked', lastUpdated: NEVER_REPORTED },
    ],
  });
  expect(cache.statusOf('S-1')).toBe('offline');
});

test('reflects what the station published', () => {
  const cache = new StationStateCache();
  cache.applyStatus('S-1', { stationId: 1, status: 'online', batteryVoltage: 12.1, lastConnection: at });
  cache.applyLockState('S-1', '2', { lockId: '2', status: 'unlocked', lastUpdated: at });
  expect(cache.view(config, true)).toMatchObject({
    status: 'online',
    batteryVoltage: 12.1,
    lastConnection: at,
    locks: [
      { lockId: '1', status: 'locked' },
      { lockId: '2', status: 'unlocked', lastUpdated: at },
    ],
  });
});

test('shows offline while the service cannot reach the broker', () => {
  const cache = new StationStateCache();
  cache.applyStatus('S-1', { stationId: 1, status: 'online', batteryVoltage: 12.1, lastConnection: at });
  expect(cache.view(config, false).status).toBe('offline');
  expect(cache.statusOf('S-1')).toBe('online');
});

test('cleared retained messages are forgotten', () => {
  const cache = new StationStateCache();
  cache.applyStatus('S-1', { stationId: 1, status: 'online', batteryVoltage: 12.1, lastConnection: at });
  cache.applyLockState('S-1', '1', { lockId: '1', status: 'jammed', lastUpdated: at });
  cache.applyStatus('S-1', undefined);
  cache.applyLockState('S-1', '1', undefined);
  expect(cache.view(config, true)).toEqual(new StationStateCache().view(config, true));
});

test('has exactly the locks its view lists: the fixture’s', () => {
  const cache = new StationStateCache();
  expect(cache.hasLock(config, '1')).toBe(true);
  expect(cache.hasLock(config, '9')).toBe(false);
  expect(cache.view(config, true).locks.map((lock) => lock.lockId)).toEqual(['1', '2']);
});
