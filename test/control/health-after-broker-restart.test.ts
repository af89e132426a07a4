/**
 * `/sim/v1/health` across a restart of a real Mosquitto that keeps nothing (persistence off): the
 * control plane forgets the statuses it heard before the broker went away, and an `api` started
 * after such a restart comes up although the station the fixture starts offline never publishes
 * its record again.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startApiProcess, startSimulator, type StartedApiProcess } from '../../src/simulator/start-simulator.js';
import { mosquittoAvailable, startMosquitto } from '../helpers/mosquitto.js';

const fixture = {
  defaults: { heartbeatMs: 0 },
  stations: [
    { token: 'R-1', stationId: 1, locks: [{ lockId: '1' }] },
    { token: 'R-2', stationId: 2, locks: [{ lockId: '1' }] },
    { token: 'R-OFF', stationId: 3, initialStatus: 'offline', locks: [{ lockId: '1' }] },
  ],
};

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Health, its `mqtt` field checked here (the broker is not the API's own) and left out of what is returned. */
async function health(api: StartedApiProcess): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${api.controlUrl}/health`);
  const { mqtt, ...body } = (await response.json()) as Record<string, unknown>;
  expect(mqtt).toEqual({ url: api.mqttUrl, embedded: false });
  return { status: response.status, body };
}

describe.runIf(mosquittoAvailable())('/sim/v1/health after a broker restart', () => {
  it('forgets the statuses heard before the broker went away: no stale counts, and not ready until the stations are back', async () => {
    const mosquitto = await startMosquitto();
    cleanups.push(() => mosquitto.stop());
    const fleet = await startSimulator({ fixture, broker: mosquitto.url, http: false });
    let fleetStopped = false;
    cleanups.push(async () => fleetStopped || fleet.stop());
    const api = await startApiProcess({ fixture, broker: mosquitto.url });
    cleanups.push(() => api.stop());
    await vi.waitFor(async () => expect(await health(api)).toEqual({ status: 200, body: { ready: true, stations: { total: 3, online: 2, offline: 1 } } }));

    await mosquitto.kill();
    await vi.waitFor(() => expect(api.control.channel.connected).toBe(false));
    // The fleet's process dies while the broker is away: nobody will ever say are online again.
    fleetStopped = true;
    await fleet.stop();
    await mosquitto.restart();
    await vi.waitFor(() => expect(api.control.channel.connected).toBe(true), { timeout: 10_000 });
    expect(await health(api)).toEqual({
      status: 503,
      body: { ready: false, reason: 'waiting for the stations expected online to report online', stations: { total: 3, online: 0, offline: 1 } },
    });
  }, 30_000);

  it('an api started after the restart comes up, although the station the fixture starts offline never publishes again', async () => {
    const mosquitto = await startMosquitto();
    cleanups.push(() => mosquitto.stop());
    const fleet = await startSimulator({ fixture, broker: mosquitto.url, http: false });
    cleanups.push(() => fleet.stop());
    await mosquitto.restart();
    // The stations that are online reconnect and publish again; R-OFF has no session to do it with.
    await vi.waitFor(() => expect(fleet.fleet.onlineCount()).toBe(2), { timeout: 10_000 });
    const api = await startApiProcess({ fixture, broker: mosquitto.url });
    cleanups.push(() => api.stop());
    await vi.waitFor(async () => expect(await health(api)).toEqual({ status: 200, body: { ready: true, stations: { total: 3, online: 2, offline: 1 } } }), {
      timeout: 5000,
    });
  }, 30_000);
});
