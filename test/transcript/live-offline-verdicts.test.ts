/**
 * The same run gives the same verdict live and offline (docs/judge.md, "Judging a transcript
 * offline"): representative runs of the kinds this suite makes are recorded, and
 * `judgeTranscript` on each file must count exactly the findings the live judge recorded in it
 * (its `judge` entries), rule by rule. A CI job that re-judges stored transcripts must not fail a
 * run that passed, nor pass one that failed.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import mqtt from 'mqtt';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ControlClient, createClient } from '../../src/client/index.js';
import { startSimulator, type SimulatorOptions } from '../../src/simulator/start-simulator.js';
import { judgeTranscript } from '../../src/transcript/transcript-judge.js';
import { findingCount } from '../../src/judge/verdict.js';
import { readTranscript } from '../helpers/read-transcript.js';
import { eventually } from '../helpers/eventually.js';
import { expectJudgeFindings } from '../helpers/judge-findings.js';

expectJudgeFindings('some recorded runs break rules on purpose, so that their verdicts have something to agree on');

const ACCOUNT = { email: 'suite@example.com', password: 'suite-password-1' };
const TOKENS = ['LO-1', 'LO-2', 'LO-3', 'LO-4'];
const FIXTURE = {
  api: { loginThrottle: { enabled: false } },
  accounts: [{ ...ACCOUNT, stations: TOKENS }],
  stations: TOKENS.map((token, index) => ({ token, stationId: index + 1, locks: [{ lockId: '1' }, { lockId: '2' }] })),
};
const SLOPPY_CLIENT = fileURLToPath(new URL('../judge/programs/sloppy-client.mjs', import.meta.url));

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'live-offline-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

let runs = 0;
/**
 * Runs `body` against a recorded simulator, waits until the control plane has every finding it
 * will have (`expectLive` of them), stops it, and returns the live verdict and the offline one.
 */
async function recorded(
  body: (sim: { apiUrl: string; mqttUrl: string; controlUrl: string }) => Promise<void>,
  expectLive: Record<string, number>,
  options: Omit<SimulatorOptions, "http"> = {},
): Promise<{ live: Record<string, number>; offline: Record<string, number>; recordedInFile: Record<string, number>; unjudgeable: number }> {
  const path = join(dir, `run-${(runs += 1)}.jsonl`);
  const sim = await startSimulator({ fixture: FIXTURE, record: path, ...options, http: true });
  let live: Record<string, number>;
  try {
    await body(sim);
    const control = new ControlClient({ url: sim.controlUrl });
    await eventually(async () => expect((await control.judge()).summary).toEqual(expectLive), { what: 'the live verdict' });
    live = (await control.judge()).summary;
  } finally {
    await sim.stop();
  }
  const { entries, skipped } = await readTranscript(await readFile(path, 'utf8'));
  expect(skipped).toBe(0);
  const replay = await judgeTranscript(entries);
  return { live, offline: replay.summary as Record<string, number>, recordedInFile: replay.recorded, unjudgeable: replay.unjudgeable };
}

async function login(apiUrl: string): Promise<string> {
  const response = await fetch(`${apiUrl}/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ACCOUNT) });
  expect(response.status).toBe(200);
  return ((await response.json()) as { accessToken: string }).accessToken;
}

it('agrees on a suite that resets and logs in once per test (the offline judge honours the recorded resets)', async () => {
  const verdicts = await recorded(async (sim) => {
    const control = new ControlClient({ url: sim.controlUrl });
    for (let test = 0; test < 8; test += 1) {
      await control.reset();
      await login(sim.apiUrl);
    }
  }, {});
  expect(verdicts).toEqual({ live: {}, offline: {}, recordedInFile: {}, unjudgeable: 0 });
});

it('agrees on the same logins without resets, which break a rule', async () => {
  const verdicts = await recorded(async (sim) => {
    for (let test = 0; test < 8; test += 1) await login(sim.apiUrl);
  }, { 'client.login-instead-of-refresh': 1 });
  expect(verdicts.offline).toEqual(verdicts.live);
  expect(verdicts.recordedInFile).toEqual(verdicts.live);
});

it('agrees on the reference client reading in parallel after revoke-all, and on unlocks through the gateway', async () => {
  const verdicts = await recorded(async (sim) => {
    const client = createClient({ baseUrl: sim.apiUrl, ...ACCOUNT });
    await client.login();
    const other = await login(sim.apiUrl);
    const revoked = await fetch(`${sim.apiUrl}/v1/auth/revoke-all`, { method: 'POST', headers: { authorization: `Bearer ${other}` } });
    expect(revoked.status).toBe(200);
    await Promise.all(TOKENS.map((token) => client.getStation(token)));
    for (const token of TOKENS) expect(await client.unlock(token, '1')).toMatchObject({ success: true });
  }, {});
  expect(verdicts).toEqual({ live: {}, offline: {}, recordedInFile: {}, unjudgeable: 0 });
});

it('agrees on a sloppy client that breaks every client rule', async () => {
  const fixture = { ...FIXTURE, stations: [...FIXTURE.stations, { token: 'LO-OFF', stationId: 9, initialStatus: 'offline' as const, locks: [{ lockId: '1' }] }] };
  fixture.accounts = [{ ...ACCOUNT, stations: [...TOKENS, 'LO-OFF'] }];
  const verdicts = await recorded(
    async (sim) => {
      await promisify(execFile)(process.execPath, [SLOPPY_CLIENT, ACCOUNT.email, 'LO-OFF', 'LO-1'], {
        env: { ...process.env, STATION_SIM_API_URL: sim.apiUrl, STATION_SIM_PASSWORD: ACCOUNT.password },
        timeout: 60_000,
      });
    },
    {
      'client.token-after-401': 1,
      'client.login-instead-of-refresh': 1,
      'client.refresh-token-reused': 1,
      'client.token-in-query': 1,
      'client.unlock-offline-station': 1,
      'client.login-burst': 1,
    },
    { fixture: { ...fixture, judge: { rules: { 'client.login-burst': { maxLogins: 10, windowMs: 600_000 } } } } },
  );
  expect(verdicts.offline).toEqual(verdicts.live);
  expect(verdicts.recordedInFile).toEqual(verdicts.live);
});

it('agrees on a backend that publishes commands against the contract', async () => {
  const verdicts = await recorded(
    async (sim) => {
      const backend = await mqtt.connectAsync(sim.mqttUrl, { clientId: 'live-offline-backend', reconnectPeriod: 0 });
      try {
        const sentAt = new Date().toISOString();
        await backend.publishAsync('stations/LO-1/locks/1/unlock', JSON.stringify({ commandId: 'lo-qos0', sentAt }), { qos: 0 });
        await backend.publishAsync('stations/LO-2/locks/9/unlock', JSON.stringify({ commandId: 'lo-lock', sentAt }), { qos: 1 });
        await backend.publishAsync('stations/LO-3/locks/1/unlock', 'not json', { qos: 1 });
      } finally {
        await backend.endAsync();
      }
    },
    { 'service.qos0-command': 1, 'service.unknown-lock': 1, 'service.bad-payload': 1 },
  );
  expect(verdicts.offline).toEqual(verdicts.live);
  expect(verdicts.recordedInFile).toEqual(verdicts.live);
  expect(findingCount({ summary: verdicts.offline })).toBe(3);
});
