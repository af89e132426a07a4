/**
 * How soon a fleet is back after a long outage of a real Mosquitto (issue 29, item 7;
 * docs/scale-out.md, "When the broker comes back"): the stations of one process, backed off to
 * their widest window, follow the first station the broker takes back within the fleet's recovery
 * window instead of sleeping out their backoff. Times are from the restart of the broker to each
 * station's session up again (subscribed, state published), polled every 20 ms. Loopback only, bounded: one outage of
 * `RECOVERY_OUTAGE_MS` (5 s by default, 30 s for the documented figures) per fleet size, and at
 * most the widest backoff window to come back. Each run prints the figures.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { mosquittoAvailable, startMosquitto, type RunningMosquitto } from '../helpers/mosquitto.js';
import { eventually } from '../helpers/eventually.js';
import { startSimulator, type StartedSimulator } from '../../src/simulator/start-simulator.js';

const OUTAGE_MS = Number(process.env.RECOVERY_OUTAGE_MS ?? 5_000);
const SIZES = (process.env.RECOVERY_FLEET_SIZES ?? '5,50').split(',').map(Number);

let mosquitto: RunningMosquitto | undefined;
let sim: StartedSimulator | undefined;
afterEach(async () => {
  await sim?.stop();
  await mosquitto?.stop();
  sim = undefined;
  mosquitto = undefined;
});

describe.runIf(mosquittoAvailable())('a fleet after a broker outage', () => {
  it.each(SIZES)(
    'of %i stations comes back',
    async (size) => {
      mosquitto = await startMosquitto();
      const running = mosquitto;
      sim = await startSimulator({
        fixture: { defaults: { heartbeatMs: 0 }, fleets: [{ count: size, tokenPattern: 'REC-{n}', firstStationId: 1, locksPerStation: 1 }] },
        broker: running.url,
        http: false,
        seed: 29,
      });
      const stations = [...sim.fleet.stations.values()];
      expect(stations.every((station) => station.connected)).toBe(true);
      await running.kill();
      await new Promise((resolve) => setTimeout(resolve, OUTAGE_MS));
      await running.restart();
      const backAt = Date.now();
      const backAfter = new Map<string, number>();
      await eventually(
        () => {
          for (const station of stations) if (station.connected && !backAfter.has(station.token)) backAfter.set(station.token, Date.now() - backAt);
          expect(backAfter.size).toBe(stations.length);
        },
        { what: `all ${size} stations back`, timeout: 20_000, interval: 20 },
      );
      const times = [...backAfter.values()];
      times.sort((a, b) => a - b);
      const median = times[Math.floor(times.length / 2)]!;
      console.info(`fleet of ${size}, outage ${OUTAGE_MS / 1000} s: first back after ${times[0]} ms, median ${median} ms, last ${times.at(-1)} ms`);
    },
    OUTAGE_MS + 60_000,
  );
});
