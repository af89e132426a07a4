/**
 * API lines of a transcript say which station and lock a request named and what it came to, so a
 * refused unlock and a good one read differently; never a bearer token, password or body.
 */
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createClient } from '../../src/client/index.js';
import { EventHub } from '../../src/control/event-hub.js';
import { parseFixture } from '../../src/fixture/load-fixture.js';
import { ManualClock } from '../../src/shared/clock.js';
import { startSimulator } from '../../src/simulator/start-simulator.js';
import { formatEntry, formatTimeline, type TranscriptEntry } from '../../src/transcript/transcript-format.js';
import { startTranscript } from '../../src/transcript/transcript-recorder.js';
import { readTranscript } from '../helpers/read-transcript.js';

type ApiEntry = Extract<TranscriptEntry, { kind: 'api' }>;

describe('API entries of a transcript', () => {
  it('name the station, the lock and the outcome of each request, good or failed', async () => {
    const file = join(await mkdtemp(join(tmpdir(), 'transcript-')), 't.jsonl');
    const sim = await startSimulator({ fixture: 'ci', clock: 'manual', record: file });
    const secrets: string[] = [];
    try {
      const ci = createClient({ baseUrl: sim.apiUrl!, email: 'ci@example.com', password: 'ci-password' });
      const other = createClient({ baseUrl: sim.apiUrl!, email: 'other@example.com', password: 'other-password' });
      expect(await ci.unlock('CI-1', '1')).toEqual({ success: true });
      expect(await ci.unlock('CI-LOWBAT', '1')).toEqual({ success: false, message: 'Battery too low' });
      expect(await ci.unlock('CI-OFFLINE', '1')).toEqual({ success: false, message: 'Station is offline' });
      await expect(ci.unlock('CI-1', '9')).rejects.toMatchObject({ status: 404 });
      await expect(other.unlock('CI-1', '1')).rejects.toMatchObject({ status: 404 });
      // A dropped command: no ack, so the request waits for the command timeout on the manual clock.
      const fault = await fetch(`${sim.controlUrl}/stations/CI-2/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ kind: 'dropCommands', count: 1 }) });
      expect(fault.status).toBe(201);
      const unanswered = ci.unlock('CI-2', '1').catch((error: unknown) => error);
      for (let i = 0; i < 10 && !(await settledWithin(unanswered)); i += 1) await sim.clock.advance(500);
      expect(await unanswered).toMatchObject({ status: 504 });
      // Credentials pasted into the path by mistake: the entries name neither, a short typo they do.
      const login = await fetch(`${sim.apiUrl}/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'ci@example.com', password: 'ci-password' }) });
      const { accessToken, refreshToken } = (await login.json()) as { accessToken: string; refreshToken: string };
      const bearer = { authorization: `Bearer ${accessToken}` };
      // A path as long as a JWT is refused before routing (414), with no route to name anything.
      expect((await fetch(`${sim.apiUrl}/v1/stations/${accessToken}`, { headers: bearer })).status).toBe(414);
      expect((await fetch(`${sim.apiUrl}/v1/stations/${refreshToken}`, { headers: bearer })).status).toBe(404);
      expect((await fetch(`${sim.apiUrl}/v1/stations/CI-1/locks/${refreshToken}/unlock`, { method: 'POST', headers: bearer })).status).toBe(404);
      expect((await fetch(`${sim.apiUrl}/v1/stations/CI-l`, { headers: bearer })).status).toBe(404);
      secrets.push(accessToken, refreshToken);
    } finally {
      await sim.stop();
    }
    const text = await readFile(file, 'utf8');
    expect(text).not.toMatch(/eyJ|ci-password|other-password|Bearer|refreshToken/);
    expect(secrets).toHaveLength(2);
    for (const secret of secrets) expect(text).not.toContain(secret);
    const { entries } = await readTranscript(text);
    const api = entries.filter((entry): entry is ApiEntry => entry.kind === 'api' && entry.route.includes('/stations/'));
    expect(api.map(({ station, lockId, status, outcome }) => ({ station, lockId, status, outcome }))).toEqual([
      { station: 'CI-1', lockId: '1', status: 200, outcome: 'accepted' },
      { station: 'CI-LOWBAT', lockId: '1', status: 200, outcome: 'BATTERY_LOW' },
      { station: 'CI-OFFLINE', lockId: '1', status: 200, outcome: 'STATION_OFFLINE' },
      { station: 'CI-1', lockId: '9', status: 404, outcome: 'LOCK_NOT_FOUND' },
      { station: 'CI-1', lockId: '1', status: 404, outcome: 'STATION_NOT_FOUND' },
      { station: 'CI-2', lockId: '1', status: 504, outcome: 'UNLOCK_OUTCOME_UNKNOWN' },
      { station: undefined, lockId: undefined, status: 404, outcome: 'STATION_NOT_FOUND' },
      { station: 'CI-1', lockId: undefined, status: 404, outcome: 'LOCK_NOT_FOUND' },
      { station: 'CI-l', lockId: undefined, status: 404, outcome: 'STATION_NOT_FOUND' },
    ]);
    // A login names no station; under the manual clock no entry has a real-time duration.
    const login = entries.find((entry): entry is ApiEntry => entry.kind === 'api' && entry.route === '/v1/auth/login');
    expect(login).toMatchObject({ status: 200 });
    expect(login).not.toHaveProperty('station');
    expect(entries.filter((entry) => entry.kind === 'api' && 'ms' in entry)).toEqual([]);
    const lines = formatTimeline(api);
    expect(lines[0]).toMatch(/API {3}POST \/v1\/stations\/:station_token\/locks\/:lock_id\/unlock {2}CI-1\/1 → 200 accepted {2}\[[0-9a-f-]{36}\]$/);
    expect(lines[1]).toMatch(/CI-LOWBAT\/1 → 200 BATTERY_LOW {2}\[/);
    expect(lines[3]).toMatch(/CI-1\/9 → 404 LOCK_NOT_FOUND$/);
    expect(lines[5]).toMatch(/CI-2\/1 → 504 UNLOCK_OUTCOME_UNKNOWN {2}\[/);
  });

  it('keep the real-time duration under a system clock, and never take a path value that could be a credential', async () => {
    const fixture = parseFixture({ stations: [{ token: 'S-1', stationId: 1, locks: [{ lockId: '1' }] }] });
    for (const manual of [false, true]) {
      const clock = Object.assign(new ManualClock(), { manual });
      const hub = new EventHub({ fixture, clock });
      const path = join(await mkdtemp(join(tmpdir(), 'transcript-')), 't.jsonl');
      const transcript = await startTranscript({ path, hub, clock });
      hub.emit({ type: 'api.request', method: 'GET', route: '/v1/stations/:station_token', status: 200, ms: 12, token: 'S-1' });
      await transcript.stop();
      hub.stop();
      const { entries } = await readTranscript(await readFile(path, 'utf8'));
      expect(entries).toEqual([{ t: expect.any(String), kind: 'api', method: 'GET', route: '/v1/stations/:station_token', status: 200, ...(manual ? {} : { ms: 12 }), station: 'S-1' }]);
    }
  });

  it('say which API fault answered in the API\'s place', async () => {
    const fixture = parseFixture({ stations: [{ token: 'S-1', stationId: 1, locks: [{ lockId: '1' }] }] });
    const clock = Object.assign(new ManualClock(), { manual: true });
    const hub = new EventHub({ fixture, clock });
    const path = join(await mkdtemp(join(tmpdir(), 'transcript-')), 't.jsonl');
    const transcript = await startTranscript({ path, hub, clock });
    hub.emit({ type: 'api.request', method: 'GET', route: '/v1/stations/:station_token', status: 503, ms: 0, token: 'S-1', fault: 'api-3' });
    await transcript.stop();
    hub.stop();
    const { entries } = await readTranscript(await readFile(path, 'utf8'));
    expect(entries).toEqual([{ t: expect.any(String), kind: 'api', method: 'GET', route: '/v1/stations/:station_token', status: 503, station: 'S-1', fault: 'api-3' }]);
    expect(formatEntry(entries[0]!, Date.parse(entries[0]!.t))).toBe('   +0.000s  API   GET /v1/stations/:station_token  S-1 → 503 by fault api-3');
  });

  it('are read from files written before they named the station and outcome', async () => {
    const { entries, skipped } = await readTranscript('{"t":"2026-01-01T00:00:00.000Z","kind":"api","method":"POST","route":"/v1/auth/login","status":200,"ms":3}\n');
    expect(skipped).toBe(0);
    expect(formatTimeline(entries)).toEqual(['   +0.000s  API   POST /v1/auth/login → 200 (3 ms)']);
  });
});

/** True once `promise` has settled, giving it a few turns of the event loop. */
async function settledWithin(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  void promise.then(() => (settled = true));
  for (let turn = 0; turn < 20 && !settled; turn += 1) await new Promise((resolve) => setImmediate(resolve));
  return settled;
}
