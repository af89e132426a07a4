/**
 * A reset between tests (`POST /sim/v1/reset`, `withSimulator`'s `beforeEach`) is a new start for
 * the client rules' counts: a suite that logs in once per test on one account breaks no rule,
 * while the same logins without the resets are logins a refresh would do. Findings stay.
 */
import { afterEach, expect, it } from 'vitest';
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
