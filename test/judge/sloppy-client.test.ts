/**
 * The client rules against a deliberately sloppy `/v1` client (test/judge/programs/sloppy-client.mjs,
 * its own process, plain fetch): the judge must report exactly the six client rules it breaks, with
 * evidence and never a token, on `GET /sim/v1/judge` and the event stream. station-sim's own
 * reference client (src/client), logging in, refreshing before and after expiry, handling a 401,
 * logging in again when its refresh token expired, reading and unlocking, must break none.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { ControlClient, createClient } from '../../src/client/index.js';
import { startSimulator, type StartedSimulator } from '../../src/simulator/start-simulator.js';
import { JudgeReplySchema, type JudgeReply } from '../../src/control/wire-schemas.js';
import { EventSocket } from '../helpers/event-socket.js';
import '../helpers/typebox-formats.js';
import { eventually } from '../helpers/eventually.js';
import { CliProcess } from '../helpers/cli-process.js';
import { RUN_EXIT } from '../../src/cli/commands/run/interface.js';
import { createReadStream } from 'node:fs';
import { judgeTranscript } from '../../src/transcript/transcript-judge.js';
import { TranscriptReader } from '../../src/transcript/transcript-reader.js';
import { expectJudgeFindings } from '../helpers/judge-findings.js';

expectJudgeFindings('a deliberately sloppy /v1 client breaks the client rules, to see the judge report them');

const APP = { email: 'app@example.com', password: 'app-password-1' };
const FIXTURE = {
  api: { accessTokenTtlSeconds: 60, refreshTokenTtlSeconds: 600 },
  accounts: [{ ...APP, stations: ['ON-1', 'OFF-1'] }],
  stations: [
    { token: 'ON-1', stationId: 1, locks: [{ lockId: '1' }, { lockId: '2' }] },
    { token: 'OFF-1', stationId: 2, initialStatus: 'offline', locks: [{ lockId: '1' }] },
  ],
  // A window wide enough for a loaded machine: the burst is counted, however slowly scrypt runs.
  judge: { rules: { 'client.login-burst': { maxLogins: 10, windowMs: 600_000 } } },
};
const SLOPPY = fileURLToPath(new URL('./programs/sloppy-client.mjs', import.meta.url));

let sim: StartedSimulator<true> | undefined;
let stream: EventSocket | undefined;
afterEach(async () => {
  stream?.close();
  await sim?.stop();
  sim = undefined;
  stream = undefined;
});

const judge = (): Promise<JudgeReply> => new ControlClient({ url: sim!.controlUrl }).judge();

describe('the client rules', () => {
  it('reports exactly the rules a sloppy client breaks, with evidence and no token', async () => {
    sim = await startSimulator({ fixture: FIXTURE });
    stream = await EventSocket.open(`${sim.controlUrl}/events`);
    await promisify(execFile)(process.execPath, [SLOPPY, APP.email, 'OFF-1', 'ON-1'], {
      env: { ...process.env, STATION_SIM_API_URL: sim.apiUrl, STATION_SIM_PASSWORD: APP.password },
      timeout: 60_000,
    });

    const expected = {
      'client.login-instead-of-refresh': { account: APP.email, route: 'POST /v1/auth/login' },
      'client.login-burst': { route: 'POST /v1/auth/login' },
      'client.unlock-offline-station': { account: APP.email, token: 'OFF-1', lockId: '1', route: 'POST /v1/stations/:station_token/locks/:lock_id/unlock' },
      'client.token-in-query': { route: 'GET /v1/stations/:station_token' },
      'client.refresh-token-reused': { account: APP.email, route: 'POST /v1/auth/refresh' },
      'client.token-after-401': { route: 'GET /v1/stations/:station_token' },
    };
    // Every request was judged when its answer went out, before the program went on.
    const reply = await judge();
    expect(Object.keys(reply.summary).sort()).toEqual(Object.keys(expected).sort());
    expect(TypeCompiler.Compile(JudgeReplySchema).Check(reply)).toBe(true);
    // Told once each: bursts once per burst, the refused token once however often it came back.
    expect(reply.summary).toEqual(Object.fromEntries(Object.keys(expected).map((id) => [id, 1])));
    for (const [rule, evidence] of Object.entries(expected)) {
      const [finding] = reply.findings.filter((found) => found.rule === rule);
      expect(finding, rule).toMatchObject({ party: 'client', client: '127.0.0.1', ...evidence });
      expect(finding!.requestId, rule).toMatch(/^req-/);
      expect(finding!.detail.length, rule).toBeGreaterThan(10);
    }
    // Never a token, nor anything shaped like one (a JWT, a refresh token, a fingerprint).
    const text = JSON.stringify(reply.findings);
    expect(text).not.toMatch(/eyJ[A-Za-z0-9_-]{10,}/);
    expect(text).not.toMatch(/[A-Za-z0-9_-]{40,}/);
    // Every client rule but the unlock burst (test/judge/judge-issue-26.test.ts fires that one).
    expect(reply.rules.filter((rule) => rule.party === 'client').map((rule) => rule.id).sort()).toEqual([...Object.keys(expected), 'client.unlock-burst'].sort());

    // The same findings on the event stream, as the fleet's arrive there.
    await eventually(() => expect(stream!.events.filter((event) => event.type === 'judge.finding')).toHaveLength(6), { what: 'six judge.finding events' });
    const events = stream.events.filter((event) => event.type === 'judge.finding');
    expect(events.map((event) => event.rule).sort()).toEqual(Object.keys(expected).sort());
    for (const event of events) expect(event).toMatchObject({ party: 'client' });
  });

  it('judges the same rules again offline, from the run\'s transcript, which holds no token', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sloppy-client-transcript-'));
    try {
      const path = join(dir, 't.jsonl');
      sim = await startSimulator({ fixture: FIXTURE, record: path });
      await promisify(execFile)(process.execPath, [SLOPPY, APP.email, 'OFF-1', 'ON-1'], {
        env: { ...process.env, STATION_SIM_API_URL: sim.apiUrl, STATION_SIM_PASSWORD: APP.password },
        timeout: 60_000,
      });
      const live = (await judge()).summary;
      await sim.stop();
      sim = undefined;
      const text = await readFile(path, 'utf8');
      expect(text).not.toMatch(/eyJ[A-Za-z0-9_-]{10,}/);
      expect(text).not.toMatch(/[A-Za-z0-9_-]{40,}/);
      const replay = await judgeTranscript(new TranscriptReader(createReadStream(path)));
      expect(replay.requests).toBeGreaterThan(10);
      expect(Object.keys(live)).toHaveLength(6);
      expect(replay.summary).toEqual(live);
      // From the command line too: the findings, and exit 1.
      const cli = new CliProcess(['transcript', 'judge', path]);
      expect(await cli.exited).toBe(1);
      for (const rule of Object.keys(live)) expect(cli.stdout).toContain(rule);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('switches a rule off and changes a threshold from the fixture', async () => {
    const rules = {
      'client.login-burst': { enabled: false },
      'client.token-in-query': { enabled: false },
      'client.login-instead-of-refresh': { maxLogins: 6 },
    };
    sim = await startSimulator({ fixture: { ...FIXTURE, judge: { rules } } });
    await promisify(execFile)(process.execPath, [SLOPPY, APP.email, 'OFF-1', 'ON-1'], {
      env: { ...process.env, STATION_SIM_API_URL: sim.apiUrl, STATION_SIM_PASSWORD: APP.password },
      timeout: 60_000,
    });
    expect(Object.keys((await judge()).summary).sort()).toEqual(['client.refresh-token-reused', 'client.token-after-401', 'client.unlock-offline-station']);
  });

  it('judges nothing with judge.enabled false', async () => {
    sim = await startSimulator({ fixture: { ...FIXTURE, judge: { enabled: false } } });
    await promisify(execFile)(process.execPath, [SLOPPY, APP.email, 'OFF-1', 'ON-1'], {
      env: { ...process.env, STATION_SIM_API_URL: sim.apiUrl, STATION_SIM_PASSWORD: APP.password },
      timeout: 60_000,
    });
    expect(await judge()).toMatchObject({ summary: {}, findings: [] });
  });

  it("finds nothing wrong with station-sim's own reference client", async () => {
    sim = await startSimulator({ fixture: FIXTURE, clock: 'manual' });
    const started = sim;
    const log: string[] = [];
    // One client refreshes ahead of expiry on the simulator's clock; the other, on real time, only
    // learns of the expiry from a 401.
    const ahead = createClient({ baseUrl: started.apiUrl, ...APP, clock: started.clock, logger: (line) => log.push(`ahead: ${line}`) });
    const late = createClient({ baseUrl: started.apiUrl, ...APP, logger: (line) => log.push(`late: ${line}`) });
    for (const client of [ahead, late]) {
      expect((await client.getStation('ON-1')).status).toBe('online');
      expect((await client.unlock('ON-1', '1')).success).toBe(true);
      // Reads the offline station and, as section 3 says, sends it no command.
      expect((await client.getStation('OFF-1')).status).toBe('offline');
    }
    // Past the access token's expiry: a refresh ahead, a 401 then a refresh.
    await started.clock.advance(61_000);
    for (const client of [ahead, late]) expect((await client.unlock('ON-1', '2')).success).toBe(true);
    // Past the refresh token's expiry too: the refresh is refused, and both log in again.
    await started.clock.advance(601_000);
    for (const client of [ahead, late]) expect((await client.getStation('ON-1')).status).toBe('online');
    await Promise.all([ahead.getStation('ON-1'), ahead.getStation('OFF-1'), late.getStation('ON-1'), late.getStation('OFF-1')]);
    await ahead.logout();
    await late.logout();
    // Each path was taken, so the silence below means something.
    expect(log).toEqual(expect.arrayContaining(['ahead: refreshing the access token', 'late: refreshing the access token', 'late: refresh token refused; logging in again']));
    expect(log.filter((line) => line.endsWith('logging in')).length).toBeGreaterThanOrEqual(4);
    const reply = await judge();
    expect(reply.summary).toEqual({});
    expect(reply.findings).toEqual([]);
  });

  it('fails `run --judge strict` around the sloppy client, naming the client rules at stop', { timeout: 120_000 }, async () => {
    // fixtures/ci.json: ci@example.com may reach CI-OFFLINE, which starts offline, and CI-1. The
    // burst window widened, so a loaded machine's slow password checks still fall inside it.
    const ci = JSON.parse(await readFile('fixtures/ci.json', 'utf8')) as Record<string, unknown>;
    const dir = await mkdtemp(join(tmpdir(), 'sloppy-client-'));
    const fixture = join(dir, 'ci-judged.json');
    await writeFile(fixture, JSON.stringify({ ...ci, judge: FIXTURE.judge }));
    const cli = new CliProcess(['run', '--fixture', fixture, '--judge', 'strict', '--', process.execPath, SLOPPY, 'ci@example.com', 'CI-OFFLINE', 'CI-1'], {
      STATION_SIM_PASSWORD: 'ci-password',
    });
    const code = await cli.exited;
    expect(code, cli.stderr).toBe(RUN_EXIT.judgeFindings);
    expect(cli.stderr).toContain(
      'station-sim: judge: 6 findings: client.token-after-401 ×1, client.login-instead-of-refresh ×1, client.refresh-token-reused ×1, client.token-in-query ×1, client.unlock-offline-station ×1, client.login-burst ×1\n',
    );
    expect(cli.stderr).toMatch(/client\.unlock-offline-station {2}CI-OFFLINE\/1 {2}POST \/v1\/stations\/:station_token\/locks\/:lock_id\/unlock from 127\.0\.0\.1 {2}account ci@example\.com {2}request req-/);
    expect(cli.stderr).not.toMatch(/eyJ[A-Za-z0-9_-]{10,}/);
    await rm(dir, { recursive: true, force: true });
  });
});
