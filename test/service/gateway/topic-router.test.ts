import { expect, test } from 'vitest';
import { TopicRouter } from '../../../src/service/gateway/topic-router.js';
import { parseFixture } from '../../../src/fixture/load-fixture.js';

const fixture = parseFixture({
  accounts: [],
  stations: [
    { token: 'A', stationId: 1, locks: [{ lockId: '1' }] },
    { token: 'B', stationId: 2, locks: [{ lockId: '1' }], behaviour: { topics: { prefix: 'acme' } } },
  ],
  fleets: [{ count: 3, tokenPattern: 'F-{n}', firstStationId: 10 }],
});
const router = new TopicRouter(fixture.stations);

test('one set of filters per distinct template set', () => {
  expect(router.filters().sort()).toEqual(
    ['stations/+/status', 'stations/+/locks/+/state', 'stations/+/acks', 'acme/+/status', 'acme/+/locks/+/state', 'acme/+/acks'].sort(),
  );
});

test('routes topics to fixture stations under their own templates only', () => {
  expect(router.route('stations/A/status')).toEqual([{ kind: 'status', token: 'A' }]);
  expect(router.route('stations/F-2/locks/3/state')).toEqual([{ kind: 'lockState', token: 'F-2', lockId: '3' }]);
  expect(router.route('acme/B/acks')).toEqual([{ kind: 'acks', token: 'B' }]);
  // B uses the acme prefix, A does not: the other prefix is not theirs.
  expect(router.route('stations/B/status')).toEqual([]);
  expect(router.route('acme/A/status')).toEqual([]);
  expect(router.route('stations/UNKNOWN/status')).toEqual([]);
  expect(router.route('stations/A/locks/1/unlock')).toEqual([]);
});

test('looks stations up by token', () => {
  expect(router.station('F-3')?.stationId).toBe(12);
  expect(router.station('nope')).toBeUndefined();
  expect(router.topicsOf('B')?.topic('unlock', { token: 'B', lockId: '1' })).toBe('acme/B/locks/1/unlock');
});
