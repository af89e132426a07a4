/**
 * `stations` stops on SIGTERM whatever its broker does meanwhile (issue 29, item 3): a real
 * Mosquitto that is stopped (SIGSTOP: connections open, nothing answered), killed during the
 * shutdown, or gone before it, with stations whose session is persistent (their final QoS 1
 * `offline` publication waited for a reconnect that never came, and the process hung). Each run
 * prints how long the stop took, for docs/scale-out.md, "Stopping".
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CliProcess } from '../helpers/cli-process.js';
import { mosquittoAvailable, startMosquitto, type RunningMosquitto } from '../helpers/mosquitto.js';
import { eventually } from '../helpers/eventually.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function fixtureFile(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'stop-fixture-'));
  const path = join(dir, 'fleet.json');
  const stations = Array.from({ length: 5 }, (_, index) => ({
    token: `STOP-${index + 1}`,
    stationId: index + 1,
    behaviour: { session: index % 2 === 0 ? 'persistent' : 'clean' },
    locks: [{ lockId: '1' }],
  }));
  await writeFile(path, JSON.stringify({ defaults: { heartbeatMs: 0 }, stations }));
  return path;
}

/** What the broker does around the SIGTERM. */
const FAULTS: [string, { before: (broker: RunningMosquitto) => Promise<void>; after: (broker: RunningMosquitto) => Promise<void> }][] = [
  [
    'stopped before SIGTERM, then killed during the shutdown',
    {
      before: async (broker) => void broker.signal('SIGSTOP'),
      after: async (broker) => broker.kill(),
    },
  ],
  ['stopped before SIGTERM and silent throughout', { before: async (broker) => void broker.signal('SIGSTOP'), after: async () => undefined }],
  ['killed before SIGTERM', { before: async (broker) => broker.kill(), after: async () => undefined }],
];

describe.runIf(mosquittoAvailable())('stations stops on SIGTERM whatever the broker does', () => {
  it.each(FAULTS)('broker %s', async (name, fault) => {
    const mosquitto = await startMosquitto();
    cleanups.push(async () => {
      mosquitto.signal('SIGCONT');
      await mosquitto.stop();
    });
    const stations = new CliProcess(['stations', '--broker', mosquitto.url, '--fixture', await fixtureFile(), '--json']);
    cleanups.push(async () => stations.child.exitCode === null && stations.signal('SIGKILL'));
    const ready = await stations.readyJson();
    expect(ready.online).toBe(5);

    await fault.before(mosquitto);
    const started = Date.now();
    stations.child.kill('SIGTERM');
    await eventually(() => expect(stations.stderr).toContain('SIGTERM received, shutting down'), { what: 'the shutdown to begin', timeout: 10_000 });
    await fault.after(mosquitto);
    const code = await stations.exited;
    console.info(`stations stop, broker ${name}: exit ${code} after ${Date.now() - started} ms`);
    // A clean stop: each wait on the broker gave up after STOP_LINGER_MS, well inside the
    // process's own bound (STOP_BOUND_MS), which would exit 1.
    expect(stations.stderr).not.toContain('the shutdown did not finish');
    expect(code).toBe(0);
  }, 90_000);
});
