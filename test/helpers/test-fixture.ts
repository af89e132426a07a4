/** A small fixture for the service tests, validated by the real loader. */
import { parseFixture } from '../../src/fixture/load-fixture.js';
import type { Fixture } from '../../src/fixture/fixture-schema.js';

export const ALICE = { email: 'alice@example.com', password: 'alice-password' } as const;
export const BOB = { email: 'bob@example.com', password: 'bob-password' } as const;

/**
 * Stations: S-1 (locks 1, 2), S-JAM (lock 1 jammed), S-OFF (offline), S-SILENT (never acks),
 * S-LOWBAT (battery too low), S-BOB (Bob's only). Alice may reach all but S-BOB.
 */
export function testFixture(api: Partial<Fixture['api']> = {}): Fixture {
  return parseFixture(
    {
      api: { accessTokenTtlSeconds: 3600, refreshTokenTtlSeconds: 2_592_000, commandTimeoutMs: 2000, ...api },
      accounts: [
        { ...ALICE, stations: ['S-1', 'S-JAM', 'S-OFF', 'S-SILENT', 'S-LOWBAT'] },
        { ...BOB, stations: ['S-BOB'] },
      ],
      stations: [
        { token: 'S-1', stationId: 1, batteryVoltage: 12.4, locks: [{ lockId: '1' }, { lockId: '2' }] },
        { token: 'S-JAM', stationId: 2, locks: [{ lockId: '1', status: 'jammed' }] },
        { token: 'S-OFF', stationId: 3, initialStatus: 'offline', locks: [{ lockId: '1' }] },
        { token: 'S-SILENT', stationId: 4, locks: [{ lockId: '1' }] },
        { token: 'S-LOWBAT', stationId: 5, batteryVoltage: 10.9, locks: [{ lockId: '1' }] },
        { token: 'S-BOB', stationId: 6, locks: [{ lockId: 'A' }] },
      ],
    },
    'test-fixture',
  );
}
