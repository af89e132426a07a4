/**
 * The request journal: the ring itself (bounds, marks, truncation, command outcomes), then
 * `/sim/v1/journal` over real HTTP with the fleet on real MQTT behind it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RequestJournal } from '../../src/control/request-journal.js';
import type { ApiRequestFields } from '../../src/control/event-hub.js';
import { startSimulator, type StartedSimulator } from '../../src/simulator/start-simulator.js';
import { createClient } from '../../src/client/index.js';

const time = '2026-01-01T00:00:00.000Z';
const at = Date.parse(time);
const api = (route: string, status = 200): ApiRequestFields => ({ method: 'GET', route, status, ms: 1 });
const unlockPayload = (commandId: string): Buffer => Buffer.from(JSON.stringify({ commandId, sentAt: time }));
const ackPayload = (ack: object): Buffer => Buffer.from(JSON.stringify(ack));

describe('RequestJournal', () => {
  it('keeps the last entries up to its capacity and says when some after a mark were dropped', () => {
    const journal = new RequestJournal({ capacity: 3 });
    for (let i = 1; i <= 5; i += 1) journal.request(api(`/v1/r${i}`), at);
    const all = journal.query();
    expect(all.entries.map((entry) => entry.seq)).toEqual([3, 4, 5]);
    expect(all).toMatchObject({ mark: 5, truncated: true });
    expect(journal.query({ since: 2 })).toMatchObject({ truncated: false, entries: [{ seq: 3 }, { seq: 4 }, { seq: 5 }] });
    expect(journal.query({ since: 4 }).entries).toEqual([{ seq: 5, at: time, kind: 'api', method: 'GET', route: '/v1/r5', status: 200, ms: 1 }]);
    expect(journal.query({ since: 5 })).toEqual({ mark: 5, truncated: false, entries: [] });
  });

  it('answers a page at a time with limit, its mark the last entry given', () => {
    const journal = new RequestJournal();
    for (let i = 1; i <= 5; i += 1) journal.request(api(`/v1/r${i}`), at);
    const first = journal.query({ limit: 2 });
    expect(first.entries.map((entry) => entry.seq)).toEqual([1, 2]);
    expect(first.mark).toBe(2);
    const rest = journal.query({ since: first.mark, limit: 3 });
    expect(rest.entries.map((entry) => entry.seq)).toEqual([3, 4, 5]);
    expect(rest.mark).toBe(5);
  });

  it('copies every field of the api.request event, whatever they are', () => {
    const journal = new RequestJournal();
    journal.request({ ...api('/v1/x'), token: 'S1', code: 'X' } as unknown as ApiRequestFields, at);
    expect(journal.query().entries[0]).toMatchObject({ kind: 'api', token: 'S1', code: 'X', at: time });
    expect(journal.query().entries[0]).not.toHaveProperty('type');
  });

  it('records a command once, with the outcome its ack or its timeout tells when read, and filters by kind and station', () => {
    let now = at;
    const journal = new RequestJournal({ commandTimeoutMs: 2000, now: () => now });
    const command = { token: 'S1', lockId: '1', commandId: 'c1' };
    journal.sent('S1', '1', unlockPayload('c1'), at);
    const seen = journal.query({ kind: 'command' });
    // A redelivery is the same command; the ack of another station with the same id is not its answer.
    journal.sent('S1', '1', unlockPayload('c1'), at + 5);
    journal.acked('S9', ackPayload({ commandId: 'c1', lockId: '1', accepted: true }), at + 6);
    journal.acked('S1', ackPayload({ commandId: 'c1', lockId: '1', accepted: false, reason: 'Battery too low' }), at + 12);
    journal.sent('S2', '1', unlockPayload('c2'), at + 20);
    journal.request(api('/v1/y'), at + 30);
    // An answer given before is not changed by what came later.
    expect(seen.entries).toEqual([{ seq: 1, at: time, kind: 'command', ...command, outcome: 'sent' }]);
    expect(journal.query({ kind: 'command', token: 'S1' }).entries).toEqual([{ seq: 1, at: time, kind: 'command', ...command, outcome: 'rejected', reason: 'Battery too low', ms: 12 }]);
    expect(journal.query({ token: 'S2' }).entries).toMatchObject([{ commandId: 'c2', outcome: 'sent' }]);
    now = at + 20 + 2000;
    expect(journal.query({ token: 'S2' }).entries).toMatchObject([{ commandId: 'c2', outcome: 'timeout', ms: 2000 }]);
    // An ack after the timeout does not make it acked.
    journal.acked('S2', ackPayload({ commandId: 'c2', lockId: '1', accepted: true }), at + 20 + 2500);
    expect(journal.query({ token: 'S2' }).entries).toMatchObject([{ commandId: 'c2', outcome: 'timeout', ms: 2000 }]);
    expect(journal.query({ kind: 'api' }).entries).toMatchObject([{ seq: 4, route: '/v1/y' }]);
  });

  it('leaves out what is not a command, and reads payloads only when asked', () => {
    const journal = new RequestJournal();
    journal.sent('S1', '1', Buffer.from('not json'), at);
    journal.sent('S1', '2', unlockPayload('c3'), at);
    expect(journal.query({ kind: 'command' }).entries).toMatchObject([{ seq: 2, commandId: 'c3', lockId: '2' }]);
  });

  it('clears without restarting seq, so an old mark still works', () => {
    const journal = new RequestJournal({ capacity: 2 });
    for (let i = 1; i <= 3; i += 1) journal.request(api(`/v1/r${i}`), at);
    expect(journal.clear()).toBe(2);
    expect(journal.query()).toEqual({ mark: 3, truncated: false, entries: [] });
    journal.request(api('/v1/r4'), at);
    expect(journal.query({ since: 3 }).entries).toMatchObject([{ seq: 4 }]);
  });
});

describe('/sim/v1/journal', () => {
  let sim: StartedSimulator;
  let control: string;

  beforeAll(async () => {
    sim = await startSimulator({ fixture: 'fixtures/ci.json' });
    control = sim.controlUrl!;
  });
  afterAll(async () => {
    await sim.stop();
  });

  async function call(method: string, path: string): Promise<{ status: number; json: any }> {
    const response = await fetch(`${control}${path}`, { method });
    return { status: response.status, json: await response.json() };
  }

  it('shows the /v1 requests and the unlock command that reached the station since a mark', async () => {
    const { json: before } = await call('GET', '/journal?limit=1');
    const user = createClient({ baseUrl: sim.apiUrl!, email: 'ci@example.com', password: 'ci-password' });
    expect(await user.unlock('CI-1', '1')).toEqual({ success: true });
    await expect
      .poll(async () => (await call('GET', `/journal?since=${before.mark}&kind=command`)).json.entries)
      .toMatchObject([{ kind: 'command', token: 'CI-1', lockId: '1', outcome: 'acked', commandId: expect.any(String) }]);
    const { json } = await call('GET', `/journal?since=${before.mark}`);
    const apiEntries = json.entries.filter((entry: { kind: string }) => entry.kind === 'api');
    expect(apiEntries.map((entry: { method: string; route: string; status: number }) => `${entry.method} ${entry.route} ${entry.status}`)).toEqual([
      'POST /v1/auth/login 200',
      'POST /v1/stations/:station_token/locks/:lock_id/unlock 200',
    ]);
    const command = json.entries.find((entry: { kind: string }) => entry.kind === 'command');
    expect(apiEntries[1].commandId).toBe(command.commandId);
    expect(apiEntries[1].seq).toBeGreaterThan(before.mark);
    expect(new Date(apiEntries[1].at).toISOString()).toBe(apiEntries[1].at);
    // The journal's own routes are not journalled, and never a token.
    expect(JSON.stringify(json)).not.toMatch(/sim\/v1|eyJ/);
  });

  it('filters by station', async () => {
    const { json } = await call('GET', '/journal?token=CI-1&kind=command');
    expect(json.entries.length).toBeGreaterThan(0);
    for (const entry of json.entries) expect(entry.token).toBe('CI-1');
  });

  it('answers a bad query value with 400 naming it', async () => {
    expect(await call('GET', '/journal?since=-1')).toEqual({ status: 400, json: { message: 'since must be a whole number from 0 to 9007199254740991, not "-1"' } });
    expect(await call('GET', '/journal?limit=0')).toEqual({ status: 400, json: { message: 'limit must be a whole number from 1 to 10000, not "0"' } });
    expect(await call('GET', '/journal?kind=mqtt')).toEqual({ status: 400, json: { message: 'kind must be "api" or "command", not "mqtt"' } });
    const unknown = await call('GET', '/journal?sinc=1');
    expect(unknown.status).toBe(400);
    expect(unknown.json.message).toMatch(/sinc/);
  });

  it('survives a reset; DELETE clears it and the mark keeps increasing', async () => {
    const user = createClient({ baseUrl: sim.apiUrl!, email: 'ci@example.com', password: 'ci-password' });
    await user.getStation('CI-2');
    const { json: before } = await call('GET', '/journal');
    expect((await call('POST', '/reset')).status).toBe(200);
    const { json: after } = await call('GET', '/journal');
    expect(after.entries.length).toBeGreaterThanOrEqual(before.entries.length);
    const cleared = await call('DELETE', '/journal');
    expect(cleared.status).toBe(200);
    expect(cleared.json.cleared).toBeGreaterThan(0);
    expect(cleared.json.mark).toBeGreaterThanOrEqual(before.mark);
    expect((await call('GET', '/journal')).json).toEqual({ mark: cleared.json.mark, truncated: false, entries: [] });
    await user.getStation('CI-2');
    const { json: next } = await call('GET', '/journal');
    expect(next.entries).toMatchObject([{ seq: cleared.json.mark + 1, kind: 'api', route: '/v1/stations/:station_token', status: 200 }]);
  });
});

describe('the journal on the event hub', () => {
  it('takes commands and requests without making the hub build every other event', async () => {
    const { EventHub } = await import('../../src/control/event-hub.js');
    const { parseFixture } = await import('../../src/fixture/load-fixture.js');
    const { ManualClock } = await import('../../src/shared/clock.js');
    const fixture = parseFixture({ stations: [{ token: 'S1', stationId: 1, locks: [{ lockId: '1' }] }] });
    const hub = new EventHub({ fixture, clock: new ManualClock(0), commandTimeoutMs: 1000 });
    const journal = new RequestJournal();
    const detach = journal.attach(hub);
    expect(hub.listening).toBe(false);
    expect(hub.wantsRequests).toBe(true);
    expect(hub.wants('api.request')).toBe(false);
    expect(hub.wants('lock.state')).toBe(false);
    hub.handleMessage('stations/S1/locks/1/unlock', Buffer.from(JSON.stringify({ commandId: 'c1', timestamp: new Date(0).toISOString() })));
    hub.handleMessage('stations/S1/acks', Buffer.from(JSON.stringify({ commandId: 'c1', lockId: '1', accepted: true, timestamp: new Date(0).toISOString() })));
    expect(journal.query().entries).toMatchObject([{ kind: 'command', token: 'S1', lockId: '1', commandId: 'c1', outcome: 'acked', ms: 0 }]);
    detach();
    expect(hub.wantsRequests).toBe(false);
    hub.stop();
  });
});
