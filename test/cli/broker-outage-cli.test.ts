/**
 * The separate-process CLI against a real Mosquitto that goes away: `stations` and `api` each say
 * once on stderr that the broker is lost and once that it is back (without the password), and two
 * `stations` processes that run the same stations both say so, once.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CliProcess } from '../helpers/cli-process.js';
import { mosquittoAvailable, startMosquitto } from '../helpers/mosquitto.js';
import { eventually } from '../helpers/eventually.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function fixtureFile(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'outage-fixture-'));
  const path = join(dir, 'fleet.json');
  await writeFile(
    path,
    JSON.stringify({
      defaults: { heartbeatMs: 0 },
      stations: [
        { token: 'O-1', stationId: 1, locks: [{ lockId: '1' }] },
        { token: 'O-2', stationId: 2, locks: [{ lockId: '1' }] },
      ],
    }),
  );
  return path;
}

function cli(args: string[]): CliProcess {
  const started = new CliProcess(args);
  cleanups.push(async () => started.child.exitCode === null && started.signal('SIGKILL'));
  return started;
}

const lines = (child: CliProcess, pattern: RegExp): string[] => child.stderr.split('\n').filter((line) => pattern.test(line));

describe.runIf(mosquittoAvailable())('broker notices of the separate processes', () => {
  it('stations and api: one line when the broker is lost and one when it is back, with no password', async () => {
    const mosquitto = await startMosquitto({ users: { sim: 'outage-secret' } });
    cleanups.push(() => mosquitto.stop());
    const url = `mqtt://sim:outage-secret@127.0.0.1:${mosquitto.port}`;
    const fixture = await fixtureFile();
    const stations = cli(['stations', '--broker', url, '--fixture', fixture, '--json']);
    const api = cli(['api', '--broker', url, '--fixture', fixture, '--http-port', '0', '--json']);
    await Promise.all([stations.readyJson(), api.readyJson()]);

    await mosquitto.kill();
    const lost = /^station-sim: lost the MQTT broker at mqtt:\/\/\*\*\*@127\.0\.0\.1:\d+/;
    await eventually(() => expect([lines(stations, lost).length, lines(api, lost).length]).toEqual([1, 1]), { timeout: 10_000, interval: 100 });
    await mosquitto.restart();
    const back = /^station-sim: the MQTT broker at mqtt:\/\/\*\*\*@127\.0\.0\.1:\d+ is back after \d+\.\d s$/;
    await eventually(() => expect([lines(stations, back).length, lines(api, back).length]).toEqual([1, 1]), { timeout: 15_000, interval: 100 });

    expect(lines(stations, lost)[0]).toMatch(/\(connect ECONNREFUSED 127\.0\.0\.1:\d+\); the stations keep reconnecting$/);
    expect(lines(api, lost)[0]).toMatch(/; the API shows every station offline and the control plane answers 503 until it is back$/);
    for (const child of [stations, api]) {
      expect(child.stderr).not.toContain('outage-secret');
      // Nothing else about the broker: no line per reconnect attempt.
      expect(lines(child, /MQTT broker/)).toHaveLength(2);
    }
  }, 60_000);

  it('two stations processes that run the same stations each say so once', async () => {
    const mosquitto = await startMosquitto();
    cleanups.push(() => mosquitto.stop());
    const fixture = await fixtureFile();
    const first = cli(['stations', '--broker', mosquitto.url, '--fixture', fixture, '--json']);
    await first.readyJson();
    const second = cli(['stations', '--broker', mosquitto.url, '--fixture', fixture, '--json']);
    await second.readyJson();
    const twice = /^station-sim: the broker closed station O-[12]'s session \(client id station-sim-O-[12]\) soon after accepting it, 3 times in a row: another process may run it too/;
    await eventually(() => expect([lines(first, twice).length, lines(second, twice).length]).toEqual([1, 1]), { timeout: 30_000, interval: 100 });
  }, 60_000);
});
