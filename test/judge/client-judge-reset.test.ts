/**
 * A reset between tests (`POST /sim/v1/reset`, `withSimulator`'s `beforeEach`) is a new start for
 * the client rules' counts: a suite that logs in once per test on one account breaks no rule,
 * while the same logins without the resets are logins a refresh would do. Findings stay.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { judgeTranscript } from '../../src/transcript/transcript-judge.js';
import { TranscriptReader } from '../../src/transcript/transcript-reader.js';
import { createReadStream } from 'node:fs';
import { ControlClient } from '../../src/client/index.js';
import { startSimulator, type StartedSimulator } from '../../src/simulator/start-simulator.js';
import { expectJudgeFindings } from '../helpers/judge-findings.js';

expectJudgeFindings('logs in eight times without a reset, to see that counted');

const ACCOUNT = { email: 'suite@example.com', password: 'suite-password-1' };
const FIXTURE = {
  api: { loginThrottle: { enabled: false } },
  accounts: [{ ...ACCOUNT, stations: ['R-1'] }],
  stations: [{ token: 'R-1', stationId: 1, locks: [{ lockId: '1' }] }],
};

let sim: StartedSimulator<true> | undefined;
afterEach(async () => {
  await sim?.stop();
  sim = undefined;
});

async function login(apiUrl: string): Promise<void> {
  const response = await fetch(`${apiUrl}/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ACCOUNT) });
  expect(response.status).toBe(200);
}

it('forgets login counts on reset, so one login per test breaks nothing; without resets the same logins are a finding', async () => {
  sim = await startSimulator({ fixture: FIXTURE });
  const control = new ControlClient({ url: sim.controlUrl });
  // Eight "tests", each reset first and logging in once.
  for (let test = 0; test < 8; test += 1) {
    await control.reset();
    await login(sim.apiUrl);
  }
  expect((await control.judge()).summary).toEqual({});

  // The same eight logins with no reset between them: more than five a minute on one account.
  for (let test = 0; test < 8; test += 1) await login(sim.apiUrl);
  const judged = await control.judge();
  expect(judged.summary).toEqual({ 'client.login-instead-of-refresh': 1 });
  // A reset forgets the counts, not the findings.
  await control.reset();
  expect((await control.judge()).summary).toEqual({ 'client.login-instead-of-refresh': 1 });
});

it('gives the same verdict offline: the transcript holds the resets, and the replay forgets at them as the live judge did', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'reset-verdict-'));
  try {
    const path = join(dir, 'run.jsonl');
    sim = await startSimulator({ fixture: FIXTURE, record: path });
    const control = new ControlClient({ url: sim.controlUrl });
    for (let test = 0; test < 8; test += 1) {
      await control.reset();
      await login(sim.apiUrl);
    }
    expect((await control.judge()).summary).toEqual({});
    await sim.stop();
    sim = undefined;
    const replay = await judgeTranscript(new TranscriptReader(createReadStream(path)));
    expect(replay.requests).toBe(8);
    expect(replay.summary).toEqual({});
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
