/**
 * `/sim/v1/health` once the only `stations` process is killed with -9: the broker sends every
 * station's last will, and health falls back to not ready (503) with a reason, instead of the 200
 * ready with 0 stations online it used to answer. A station taken offline on purpose does not
 * make it flap.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startEmbeddedBroker } from '../../src/broker/embedded-broker.js';
import { startApiProcess, type StartedApiProcess } from '../../src/simulator/start-simulator.js';
import { CliProcess } from '../helpers/cli-process.js';
import { eventually } from '../helpers/eventually.js';

const fixture = {
  defaults: { heartbeatMs: 0 },
  stations: [
    { token: 'K-1', stationId: 1, locks: [{ lockId: '1' }] },
    { token: 'K-2', stationId: 2, locks: [{ lockId: '1' }] },
    { token: 'K-OFF', stationId: 3, initialStatus: 'offline', locks: [{ lockId: '1' }] },
  ],
};

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Health, its `mqtt` field checked here (the broker is not the API's own) and left out of what is returned. */
async function health(api: StartedApiProcess): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${api.controlUrl}/health`);
  const { mqtt, ...body } = (await response.json()) as Record<string, unknown>;
  expect(mqtt).toEqual({ url: api.mqttUrl, embedded: false });
  return { status: response.status, body };
}

describe('/sim/v1/health after the fleet process is killed', () => {
  it('is not ready, with a reason, once every station expected online is offline; a station taken offline on purpose does not count', async () => {
    const broker = await startEmbeddedBroker({ port: 0 });
    cleanups.push(() => broker.stop());
    const dir = await mkdtemp(join(tmpdir(), 'killed-fleet-'));
    const path = join(dir, 'fleet.json');
    await writeFile(path, JSON.stringify(fixture));
    const stations = new CliProcess(['stations', '--broker', broker.url, '--fixture', path, '--json']);
    cleanups.push(async () => stations.child.exitCode === null && stations.signal('SIGKILL'));
    await stations.readyJson();
    const api = await startApiProcess({ fixture, broker: broker.url });
    cleanups.push(() => api.stop());
    await eventually(async () => expect(await health(api)).toEqual({ status: 200, body: { ready: true, stations: { total: 3, online: 2, offline: 1 } } }));

    // On purpose: one station offline; the other is still online, and health stays ready.
    const taken = await fetch(`${api.controlUrl}/stations/K-1/connection`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"online":false}' });
    expect(taken.status).toBe(200);
    await eventually(async () => expect(await health(api)).toEqual({ status: 200, body: { ready: true, stations: { total: 3, online: 1, offline: 2 } } }));

    expect(await stations.signal('SIGKILL')).toBe(null);
    await eventually(async () =>
      expect(await health(api)).toEqual({
        status: 503,
        body: { ready: false, reason: 'the one station expected online is offline: is the stations process running?', stations: { total: 3, online: 0, offline: 3 } },
      }),
    );
  }, 60_000);
});
