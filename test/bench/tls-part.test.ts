/**
 * The pure pieces of the benchmark's `tls` part (bench/tls.ts): the reconnect storm's figures from
 * the online samples, the boot fleet's tokens (which the raw baseline's certificates must match),
 * the production config the bench runs, the `--broker-auth` fixtures and the new flags.
 */
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { stormFigures } from '../../bench/tls.js';
import { bootFixture, bootTokens, unlockFixture } from '../../bench/lib/fixtures.js';
import { benchProductionConfig } from '../../bench/lib/production-mosquitto.js';
import { parseBenchArgs } from '../../bench/lib/args.js';
import { parseFixture } from '../../src/fixture/load-fixture.js';

describe('stormFigures', () => {
  it('measures from the kill and from the restart, and takes the steepest climb as the peak', () => {
    const killAt = 10_000;
    const samples = [
      { at: 9_900, online: 100 },
      { at: 10_100, online: 0 },
      { at: 10_300, online: 40 },
      { at: 10_500, online: 90 },
      { at: 10_700, online: 100 },
    ];
    const figures = stormFigures(samples, true, 100, killAt, 10_200);
    expect(figures).toMatchObject({ allBack: true, killToAllBackMs: 700, restartToAllBackMs: 500, restartMs: 200, lowestOnline: 0, peakPerSecond: 250, meanPerSecond: 200, samples: 5 });
    expect(figures.curve[0]).toEqual([-100, 100]);
    expect(figures.curve.at(-1)).toEqual([700, 100]);
  });

  it('gives no time to all back when the fleet did not come back, and thins a long curve to about 100 points', () => {
    const samples = Array.from({ length: 600 }, (_, index) => ({ at: index * 200, online: index === 0 ? 10 : 5 }));
    const figures = stormFigures(samples, false, 10, 100, 300);
    expect(figures.killToAllBackMs).toBeNaN();
    expect(figures.peakPerSecond).toBe(0);
    expect(figures.curve.length).toBeLessThanOrEqual(101);
    expect(figures.curve.at(-1)).toEqual([599 * 200 - 100, 5]);
  });
});

describe('the tls part’s fixtures', () => {
  afterEach(() => {
    delete process.env.BENCH_BROKER_AUTH;
  });

  it('names the boot fleet’s tokens as the fixture loader makes them, so station i’s certificate is client i’s', () => {
    for (const stations of [9, 100, 1234]) {
      const fixture = parseFixture(bootFixture({ stations, locksPerStation: 1 }));
      expect(fixture.stations.map((station) => station.token)).toEqual(bootTokens(stations));
    }
  });

  it('puts the certificate folder in the boot fixture when asked, and mqtt.broker.auth only under --broker-auth', () => {
    expect(parseFixture(bootFixture({ stations: 2, locksPerStation: 1, mqtt: { certs: '/tmp/pki' } })).mqtt).toEqual({ certs: '/tmp/pki' });
    expect(parseFixture(bootFixture({ stations: 2, locksPerStation: 1 })).mqtt).toEqual({});
    process.env.BENCH_BROKER_AUTH = '1';
    expect(parseFixture(bootFixture({ stations: 2, locksPerStation: 1 })).mqtt).toEqual({ broker: { auth: true } });
    expect(parseFixture(unlockFixture({ stations: 2, locksPerStation: 1 })).mqtt).toEqual({ broker: { auth: true } });
    // The tls part's plain Mosquitto run gives an empty section: --broker-auth stays out of it.
    expect(parseFixture(unlockFixture({ stations: 2, locksPerStation: 1, mqtt: {} })).mqtt).toEqual({});
  });
});

describe('the production Mosquitto of the bench', () => {
  it('changes only the listeners’ ports and the folder of the shipped config', () => {
    const template = readFileSync(new URL('../../docs/mosquitto/station-sim.conf', import.meta.url), 'utf8');
    const config = benchProductionConfig(template, { dir: '/tmp/x', certificatePort: 1234, passwordPort: 1235 });
    const [lines, shipped] = [config.split('\n'), template.split('\n')];
    expect(lines).toHaveLength(shipped.length);
    const expected = shipped.map((line) => (line.startsWith('listener ') ? lines[shipped.indexOf(line)] : line.replaceAll('/etc/mosquitto/station-sim', '/tmp/x')));
    expect(lines).toEqual(expected);
    expect(config).toContain('listener 1234 127.0.0.1');
    expect(config).toContain('cafile /tmp/x/ca.crt');
    expect(config).not.toContain('/etc/mosquitto');
  });
});

describe('the tls flags', () => {
  it('defaults to 10,000 stations (1,000 quick), 100 unlock stations, 300 unlocks (100 quick), broker auth off', () => {
    expect(parseBenchArgs([])).toMatchObject({ tlsStations: 10_000, tlsUnlockStations: 100, tlsUnlocks: 300, brokerAuth: false });
    expect(parseBenchArgs(['--quick'])).toMatchObject({ tlsStations: 1000, tlsUnlocks: 100 });
    expect(parseBenchArgs(['--only', 'tls', '--tls-stations', '500', '--broker-auth'])).toMatchObject({ parts: ['tls'], tlsStations: 500, brokerAuth: true });
    expect(() => parseBenchArgs(['--tls-stations', '0'])).toThrow(/--tls-stations/);
  });
});
