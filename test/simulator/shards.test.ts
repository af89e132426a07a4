/**
 * Scale-out topology (docs/scale-out.md): two `stations --shard k/2` processes and one `api`
 * process against a Mosquitto started here. Every station must be visible and unlockable.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../src/client/index.js';
import { loadFixture } from '../../src/fixture/load-fixture.js';
import { shardStations } from '../../src/simulator/start-simulator.js';
import { CliProcess } from '../helpers/cli-process.js';
import { mosquittoAvailable, startMosquitto, type RunningMosquitto } from '../helpers/mosquitto.js';

describe('shardStations', () => {
  it('splits a fleet deterministically, every station in exactly one shard', () => {
    const stations = Array.from({ length: 10 }, (_, i) => i);
    const shards = [1, 2, 3].map((index) => shardStations(stations, { index, count: 3 }));
    expect(shards).toEqual([[0, 3, 6, 9], [1, 4, 7], [2, 5, 8]]);
    expect(() => shardStations(stations, { index: 4, count: 3 })).toThrow('shard 4/3 is not valid');
  });
});

describe.runIf(mosquittoAvailable())('two shard processes and an API process on one Mosquitto', () => {
  let mosquitto: RunningMosquitto;
  const processes: CliProcess[] = [];
  let apiUrl: string;

  beforeAll(async () => {
    mosquitto = await startMosquitto();
    const shards = [1, 2].map((k) => new CliProcess(['stations', '--broker', mosquitto.url, '--fixture', 'fixtures/ci.json', '--shard', `${k}/2`, '--json']));
    processes.push(...shards);
    const ready = await Promise.all(shards.map((shard) => shard.readyJson()));
    expect(ready.map((r) => r.stations)).toEqual([13, 12]);
    const api = new CliProcess(['api', '--broker', mosquitto.url, '--fixture', 'fixtures/ci.json', '--http-port', '0', '--json']);
    processes.push(api);
    apiUrl = (await api.readyJson()).apiUrl;
  });

  afterAll(async () => {
    for (const process of processes) await process.signal('SIGTERM');
    await mosquitto?.stop();
  });

  it('sees every station of both shards and unlocks a lock in each', async () => {
    const fixture = await loadFixture('fixtures/ci.json');
    const health = await (await fetch(`${apiUrl}/sim/v1/health`)).json();
    expect(health).toEqual({ ready: true, stations: { total: 25, online: 24, offline: 1 }, mqtt: { url: expect.stringMatching(/^mqtt:\/\//), embedded: false } });
    const snapshot = await (await fetch(`${apiUrl}/sim/v1/stations`)).json();
    expect(snapshot.stations.map((s: { token: string }) => s.token)).toEqual(fixture.stations.map((s) => s.token));
    const client = createClient({ baseUrl: apiUrl, email: 'ci@example.com', password: 'ci-password' });
    // CI-1 is station 0 (shard 1), CI-2 is station 1 (shard 2).
    expect(await client.unlock('CI-1', '1')).toEqual({ success: true });
    expect(await client.unlock('CI-2', '1')).toEqual({ success: true });
    expect((await client.getStation('CI-FLEET-02')).status).toBe('online');
  });
});
