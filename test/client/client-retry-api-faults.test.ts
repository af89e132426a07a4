/**
 * The reference client's token renewal (interface section 5: on 401, refresh; if that gives 401,
 * log in again; then retry once) against API faults of a real simulator, with the request journal
 * saying exactly which requests it made. Also `ControlClient.verify` and its failure message.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSimulator, type StartedSimulator } from '../../src/simulator/start-simulator.js';
import { ApiError, ControlClient, createClient, type StationSimClient } from '../../src/client/index.js';

const STATION = '/v1/stations/:station_token';

let sim: StartedSimulator;
let control: ControlClient;
let user: StationSimClient;
let mark: number;

beforeAll(async () => {
  sim = await startSimulator({ fixture: 'fixtures/ci.json' });
  control = new ControlClient({ url: sim.apiUrl! });
});
afterAll(async () => {
  control.close();
  await sim.stop();
});
beforeEach(async () => {
  await control.clearApiFaults();
  user = createClient({ baseUrl: sim.apiUrl!, email: 'ci@example.com', password: 'ci-password' });
  await user.login();
  mark = await control.mark();
});

/** The API requests since the mark, as `METHOD route status`. */
async function requests(): Promise<string[]> {
  const { entries } = await control.journal({ since: mark, kind: 'api' });
  return entries.map((entry) => (entry.kind === 'api' ? `${entry.method} ${entry.route} ${entry.status}${entry.fault ? ' (fault)' : ''}` : ''));
}

describe('the reference client against API faults', () => {
  it('refreshes its token after a 401 and succeeds', async () => {
    await control.addApiFault({ route: `GET ${STATION}`, token: 'CI-1', kind: 'status', status: 401, count: 1 });
    expect((await user.getStation('CI-1')).status).toBe('online');
    expect(await requests()).toEqual([`GET ${STATION} 401 (fault)`, 'POST /v1/auth/refresh 200', `GET ${STATION} 200`]);
    await control.verify({ since: mark, method: 'POST', route: '/v1/auth/refresh', status: 200 }, { count: 1 });
    await control.verify({ since: mark, route: '/v1/auth/login' }, { count: 0 });
  });

  it('logs in again when the refresh gets 401 too, and succeeds', async () => {
    await control.addApiFault({ route: `GET ${STATION}`, kind: 'status', status: 401, count: 1 });
    await control.addApiFault({ route: 'POST /v1/auth/refresh', kind: 'status', status: 401, count: 1 });
    expect((await user.getStation('CI-1')).status).toBe('online');
    expect(await requests()).toEqual([`GET ${STATION} 401 (fault)`, 'POST /v1/auth/refresh 401 (fault)', 'POST /v1/auth/login 200', `GET ${STATION} 200`]);
  });

  it('surfaces a 500 as ApiError without retrying', async () => {
    await control.addApiFault({ route: `GET ${STATION}`, kind: 'status', status: 500, count: 1 });
    const failure = await user.getStation('CI-1').then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(ApiError);
    expect(failure).toMatchObject({ status: 500, message: 'Internal server error' });
    expect(await requests()).toEqual([`GET ${STATION} 500 (fault)`]);
    await control.verify({ since: mark, method: 'get', route: STATION }, { count: 1 });
  });
});

describe('ControlClient.verify', () => {
  it('returns the matching entries, and fails saying what it expected and what it saw', async () => {
    await user.getStation('CI-2');
    const matching = await control.verify({ since: mark, token: undefined, route: STATION });
    expect(matching).toHaveLength(1);
    const failure = await control.verify({ since: mark, method: 'POST', route: '/v1/auth/refresh' }, { atLeast: 2 }).then(
      () => undefined,
      (error: Error) => error,
    );
    expect(failure?.message).toMatch(/^expected at least 2 journal entries matching since=\d+ method=POST route=\/v1\/auth\/refresh, found 0\nmatching:\n  \(none\)\nothers seen:\n  #\d+ api GET \/v1\/stations\/:station_token 200 \d+ ms token=CI-2$/);
    expect(failure?.message).not.toMatch(/eyJ/);
  });

  it('counts unlock commands by station and lock, with their outcome on the line', async () => {
    expect(await user.unlock('CI-1', '1')).toEqual({ success: true });
    await control.verify({ since: mark, kind: 'command', token: 'CI-1', lockId: '1' }, { count: 1 });
    const failure = await control.verify({ since: mark, kind: 'command', token: 'CI-2' }).catch((error: Error) => error);
    expect((failure as Error).message).toMatch(/others seen:\n {2}#\d+ command CI-1 lock 1 \S+ (sent|acked)/);
  });
});
