import { createHash, randomUUID } from 'node:crypto';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startSimulator } from '../../src/simulator/start-simulator.js';
import { createClient } from '../../src/client/index.js';
import { ManualClock } from '../../src/shared/clock.js';
import { seededUuids } from '../../src/shared/seeded-ids.js';

const fixture = {
  defaults: { unlockDelayMs: { min: 100, max: 3000 }, relockMs: { min: 500, max: 4000 }, heartbeatMs: 0 },
  accounts: [{ email: 'd@example.com', password: 'pw', stations: ['D-1', 'D-2', 'D-3'] }],
  stations: ['D-1', 'D-2', 'D-3'].map((token, i) => ({ token, stationId: i + 1, locks: [{ lockId: '1' }, { lockId: '2' }] })),
  scenario: [{ at: '2s', station: 'D-2', do: 'jam', lockId: '2' }],
};

/** What happened, in order, with simulated times relative to the start: no ids, no wall clock. */
async function story(seed: number): Promise<string[]> {
  const sim = await startSimulator({ fixture, seed, clock: 'manual' });
  const start = sim.clock.now();
  const lines: string[] = [];
  const unsubscribe = sim.http!.control.hub.subscribe((event) => {
    if (event.type === 'lock.state') lines.push(`${Date.parse(event.lastUpdated) - start} ${event.token}/${event.lockId} ${event.status}`);
  });
  try {
    const client = createClient({ baseUrl: sim.apiUrl!, email: 'd@example.com', password: 'pw' });
    for (const token of ['D-1', 'D-2', 'D-3']) for (const lockId of ['1', '2']) expect(await client.unlock(token, lockId)).toEqual({ success: true });
    for (let step = 0; step < 20; step += 1) await sim.clock.advance(500);
    return lines;
  } finally {
    unsubscribe();
    await sim.stop();
  }
}

describe('reproducible runs', () => {
  it('the same fixture and seed give the same sequence of events; another seed another one', async () => {
    const first = await story(11);
    const again = await story(11);
    const other = await story(12);
    // All six locks open; lock D-2/2 is jammed by the scenario at 2 s while open, so five relock.
    expect(first).toContain('2000 D-2/2 jammed');
    expect(first.filter((line) => line.endsWith(' unlocked'))).toHaveLength(6);
    expect(first.filter((line) => / locked$/.test(line))).toHaveLength(5);
    expect(again).toEqual(first);
    expect(other).not.toEqual(first);
  });
});

const tokens = ['R-1', 'R-2', 'R-3'];
const scenarioFixture = {
  defaults: { unlockDelayMs: { min: 100, max: 3000 }, relockMs: { min: 500, max: 4000 }, heartbeatMs: 1000 },
  api: { commandTimeoutMs: 2000 },
  accounts: [{ email: 'r@example.com', password: 'pw', stations: tokens }],
  stations: tokens.map((token, i) => ({ token, stationId: i + 1, locks: [{ lockId: '1' }, { lockId: '2' }] })),
  scenario: [
    // R-1's broker connection is cut without DISCONNECT (its last will fires) and comes back.
    { at: '1s', station: 'R-1', do: 'offline' },
    { at: '3s', station: 'R-1', do: 'online' },
    { at: '2s', station: 'R-2', do: 'reboot', downMs: 1500 },
    { at: '4s', station: 'R-3', do: 'fault', fault: { kind: 'reject', reason: 'maintenance', count: 1 } },
    { at: '5s', station: 'R-3', do: 'jam', lockId: '2' },
    // Every station at once: their messages must still come in one order.
    { at: '5500ms', do: 'reset' },
  ],
};

/**
 * Issue 18, "Determinism": one run of a fixture whose scenario takes stations offline, reboots one
 * and cuts and restores a station's broker connection: unlocks on every lock at steps of simulated time, while the scenario runs; returns the
 * transcript's text. The manual clock starts at a fixed instant: `clock: 'manual'` starts at the
 * real time of the start, which every time in the file would carry.
 */
async function run(seed: number, clock: 'manual' | ManualClock = new ManualClock(Date.parse('2026-03-01T00:00:00.000Z'))): Promise<{ text: string; start: number }> {
  const file = join(await mkdtemp(join(tmpdir(), 'determinism-')), 't.jsonl');
  const sim = await startSimulator({ fixture: scenarioFixture, seed, clock, record: file });
  const start = sim.clock.now();
  try {
    // The client reads token expiry on the simulator's clock, as the API writes it.
    const client = createClient({ baseUrl: sim.apiUrl!, email: 'r@example.com', password: 'pw', clock: sim.clock });
    for (let round = 0; round < 8; round += 1) {
      // One request at a time: requests in flight together would reach the API in whatever order
      // the sockets deliver them.
      for (const token of tokens) for (const lockId of ['1', '2']) await client.unlock(token, lockId).catch((error: unknown) => error);
      await sim.clock.advance(750);
    }
    await sim.clock.advance(5000);
  } finally {
    await sim.stop();
  }
  return { text: await readFile(file, 'utf8'), start };
}

/** Every time in a transcript as milliseconds since `start`: what is left once the start instant is taken out. */
const sinceStart = ({ text, start }: { text: string; start: number }): string =>
  text.replace(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z/g, (time) => `+${Date.parse(time) - start}`);

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

describe('transcripts of a manual clock', () => {
  it('are byte-identical for the same fixture and seed, through offline, reboot and reconnect; another seed differs', async () => {
    const first = (await run(21)).text;
    const again = (await run(21)).text;
    const other = (await run(22)).text;
    // The story is there: the cut connection's last will, the reboot, refused and good unlocks.
    expect(first).toMatch(/"kind":"sim","event":"control","station":"R-1","detail":"[^"]*offline/);
    expect(first).toMatch(/"station":"R-1"[^\n]*"status":"offline"/);
    expect(first).toMatch(/"event":"control","station":"R-2","detail":"[^"]*reboot/);
    expect(first).toMatch(/"event":"control","detail":"[^"]*reset/);
    expect(first).toContain('"outcome":"STATION_OFFLINE"');
    expect(first).toContain('"outcome":"accepted"');
    expect(first).not.toMatch(/"ms":/);
    // On a mismatch, the lines say where the runs parted.
    if (sha256(again) !== sha256(first)) expect(again.split('\n')).toEqual(first.split('\n'));
    expect(sha256(again)).toBe(sha256(first));
    expect(sha256(other)).not.toBe(sha256(first));
  }, 120_000);

  it('with clock "manual" (--clock manual), which starts at the real time of the start, differ by that start only', async () => {
    const first = await run(21, 'manual');
    const again = await run(21, 'manual');
    expect(first.start).not.toBe(again.start);
    expect(sha256(sinceStart(again))).toBe(sha256(sinceStart(first)));
    // And the fixed-start run is the same story again.
    const fixed = await run(21);
    expect(sha256(sinceStart(fixed))).toBe(sha256(sinceStart(first)));
  }, 120_000);
});

describe('seeded command ids', () => {
  it('look like randomUUID ids, do not repeat, and replay with the seed', () => {
    const shape = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
    expect(randomUUID()).toMatch(shape);
    const ids = seededUuids(5);
    const first = Array.from({ length: 10_000 }, () => ids());
    for (const id of first.slice(0, 100)) expect(id).toMatch(shape);
    expect(new Set(first).size).toBe(first.length);
    const again = seededUuids(5);
    expect(Array.from({ length: 100 }, () => again())).toEqual(first.slice(0, 100));
    expect(seededUuids(6)()).not.toBe(first[0]);
  });
});
