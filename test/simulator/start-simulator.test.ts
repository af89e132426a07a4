import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { startEmbeddedBroker, startSimulator } from '../../src/index.js';
import { resolveFixture } from '../../src/simulator/resolve-fixture.js';
import { MqttObserver } from '../helpers/mqtt-observer.js';

/**
 * Handles that a stopped simulator could leave behind (timers are unref'd by design, so count them
 * apart; a CloseReq is a file read by an earlier test being closed, which ends on its own).
 */
function openHandles(): string[] {
  return process.getActiveResourcesInfo().filter((kind) => kind !== 'Timeout' && kind !== 'Immediate' && kind !== 'CloseReq');
}

describe('startSimulator (library)', () => {
  it('starts broker and fleet on free ports, and stop() leaves no handle open', async () => {
    const before = openHandles();
    const sim = await startSimulator({ fixture: 'fixtures/ci.json' });
    expect(sim.mqttUrl).toMatch(/^mqtt:\/\/127\.0\.0\.1:\d+$/);
    expect(sim.mqttUrl).not.toBe('mqtt://127.0.0.1:1883');
    expect(sim.fleet.stations.size).toBe(25);
    expect(sim.fleet.onlineCount()).toBe(24);
    const observer = await MqttObserver.connect(sim.mqttUrl, ['stations/CI-2/status']);
    const status = await observer.waitFor(() => true, 'CI-2 status');
    expect(status.json).toMatchObject({ stationId: 2, status: 'online' });
    await observer.close();
    await sim.stop();
    await new Promise((resolve) => setImmediate(resolve));
    expect(openHandles()).toEqual(before);
  });

  it('accepts fixture data in memory and a seed override', async () => {
    const sim = await startSimulator({
      fixture: { seed: 5, stations: [{ token: 'MEM-1', stationId: 9, locks: [{ lockId: 'x' }] }] },
      seed: 99,
    });
    try {
      expect(sim.seed).toBe(99);
      expect(sim.fleet.get('MEM-1')?.model.snapshot()).toMatchObject({ stationId: 9, status: 'online', locks: [{ lockId: 'x', status: 'locked' }] });
    } finally {
      await sim.stop();
    }
  });

  it("lets MQTT traffic flow during a long manual-clock advance, a minute at a time, instead of holding it all until the end", async () => {
    const sim = await startSimulator({ fixture: 'fixtures/ci.json', clock: 'manual' });
    try {
      const minutesSeen = new Set<number>();
      await sim.broker!.tap(['stations/+/status'], () => minutesSeen.add(Math.floor(sim.clock.now() / 60_000)));
      const start = sim.clock.now();
      await sim.clock.advance(10 * 60_000);
      expect(sim.clock.now()).toBe(start + 10 * 60_000);
      // Heartbeats arrived while the clock stood at many different minutes, not all at the last one.
      expect(minutesSeen.size).toBeGreaterThanOrEqual(9);
    } finally {
      await sim.stop();
    }
  });

  it('rejects an invalid fixture before starting anything', async () => {
    await expect(startSimulator({ fixture: { stations: [{ token: 'A', stationId: 0, locks: [] }] } })).rejects.toThrow(
      /<fixture>: \/stations\/0\/stationId: must be >= 1\n<fixture>: \/stations\/0\/locks: must NOT have fewer than 1 items/,
    );
  });

  it('refuses a time scale it would ignore (a manual clock) or cannot run (zero), or a seed the random source would cut, and leaves nothing open', async () => {
    const before = openHandles();
    const fixture = { stations: [{ token: 'TS-1', stationId: 1, locks: [{ lockId: '1' }] }] };
    await expect(startSimulator({ fixture, clock: 'manual', timeScale: 10 })).rejects.toMatchObject({
      code: 'BAD_REQUEST',
      message: 'timeScale works with the system clock only, not with clock: "manual"',
    });
    await expect(startSimulator({ fixture, timeScale: 0 })).rejects.toMatchObject({ code: 'BAD_REQUEST', message: 'timeScale must be a positive number, not 0' });
    await expect(startSimulator({ fixture, seed: 2 ** 32 + 1 })).rejects.toMatchObject({ code: 'BAD_REQUEST', message: 'seed must be a whole number from 0 to 2147483647, not 4294967297' });
    expect(openHandles()).toEqual(before);
  });

  it('takes the name of a shipped fixture for the file in the package, not in the working directory', async () => {
    const fixture = await resolveFixture('ci');
    expect(fixture.source).toBe(fileURLToPath(new URL('../../fixtures/ci.json', import.meta.url)));
    expect(fixture.stations).toHaveLength(25);
    expect((await resolveFixture('demo')).source).toBe(fileURLToPath(new URL('../../fixtures/demo.json', import.meta.url)));
  });

  it('names a host it cannot listen on HOST_UNAVAILABLE, on the broker thread and on the HTTP side, and leaves nothing open', async () => {
    const before = openHandles();
    const fixture = { stations: [{ token: 'H-1', stationId: 1, locks: [{ lockId: '1' }] }] };
    // 192.0.2.0/24 is TEST-NET-1 (RFC 5737): never a local address.
    await expect(startSimulator({ fixture, host: '192.0.2.1', insecureControl: true, insecureBroker: true })).rejects.toMatchObject({
      code: 'HOST_UNAVAILABLE',
      message: "Cannot listen on 192.0.2.1 for MQTT: the address is not one of this machine's (EADDRNOTAVAIL)",
    });
    const broker = await startEmbeddedBroker({ port: 0 });
    try {
      await expect(startSimulator({ fixture, broker: broker.url, host: 'no.such.host.invalid', insecureControl: true })).rejects.toMatchObject({
        code: 'HOST_UNAVAILABLE',
        message: 'Cannot listen on no.such.host.invalid for HTTP: the host name does not resolve (ENOTFOUND)',
      });
    } finally {
      await broker.stop();
    }
    expect(openHandles()).toEqual(before);
  });
});
