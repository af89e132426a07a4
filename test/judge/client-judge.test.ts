/**
 * The client rules one by one (src/judge/client-judge.ts), on observations built by hand, as a
 * replay from a record would feed them: what is "after" a 401 or a read, thresholds, rules
 * switched off, bursts told once, the bounds of its memory, and that no finding carries a token or
 * a fingerprint of one.
 */
import { describe, expect, it } from 'vitest';
import type { JudgeSettings } from '../../src/fixture/judge-schema.js';
import type { JudgeFinding } from '../../src/judge/judge-log.js';
import { ClientJudge, LOGIN_ROUTE, STATION_ROUTE, UNLOCK_ROUTE, type ClientObservation } from '../../src/judge/client-judge.js';

const NOW = Date.parse('2026-01-01T12:00:00.000Z');
const FINGERPRINT = 'Zm9vYmFyYmF6cXV4';

function judged(settings: JudgeSettings = {}, capacity?: number) {
  const findings: JudgeFinding[] = [];
  const judge = new ClientJudge({ settings, onFinding: (finding) => findings.push(finding), ...(capacity === undefined ? {} : { capacity }) });
  let arrival = 0;
  /** A request that arrived after every earlier answer, answered at once. */
  const request = (over: Partial<ClientObservation> = {}): ClientObservation => {
    arrival += 1;
    const observation: ClientObservation = {
      time: NOW,
      requestId: `req-${arrival}`,
      arrival,
      arrivalsAtAnswer: arrival,
      method: 'GET',
      route: STATION_ROUTE,
      status: 200,
      client: '127.0.0.1',
      ...over,
    };
    judge.observe(observation);
    return observation;
  };
  return { judge, findings, request, rules: () => findings.map((finding) => finding.rule) };
}

const read = (status: string, over: Partial<ClientObservation> = {}): Partial<ClientObservation> => ({
  account: 'a@example.com',
  accessToken: FINGERPRINT,
  station: 'S-1',
  stationStatus: status,
  ...over,
});
const unlock = (over: Partial<ClientObservation> = {}): Partial<ClientObservation> => ({
  method: 'POST',
  route: UNLOCK_ROUTE,
  account: 'a@example.com',
  accessToken: FINGERPRINT,
  station: 'S-1',
  lockId: '1',
  ...over,
});
const login = (over: Partial<ClientObservation> = {}): Partial<ClientObservation> => ({ method: 'POST', route: LOGIN_ROUTE, account: 'a@example.com', ...over });

describe('client.token-after-401', () => {
  it('finds a token sent again after its 401, told once with evidence', () => {
    const { request, findings } = judged();
    request({ accessToken: FINGERPRINT, status: 401 });
    request({ accessToken: FINGERPRINT, status: 401 });
    request({ accessToken: FINGERPRINT, status: 401 });
    expect(findings).toEqual([
      {
        time: new Date(NOW).toISOString(),
        rule: 'client.token-after-401',
        party: 'client',
        requestId: 'req-2',
        client: '127.0.0.1',
        route: `GET ${STATION_ROUTE}`,
        detail: expect.stringContaining('answered 401 (request req-1) was sent again 1 time'),
      },
    ]);
  });

  it('does not judge requests already in flight when the 401 went out, nor a refreshed token', () => {
    const { request, findings } = judged();
    // Two concurrent calls with one token: the second arrived before the first's 401 was sent.
    request({ accessToken: FINGERPRINT, status: 401, arrivalsAtAnswer: 2 });
    request({ accessToken: FINGERPRINT, status: 401 });
    request({ method: 'POST', route: '/v1/auth/refresh', refreshToken: 'rotated', account: 'a@example.com' });
    request({ accessToken: 'bmV3LXRva2VuLWZw', account: 'a@example.com' });
    expect(findings).toEqual([]);
  });

  it('tells another client address apart, and takes maxRepeats', () => {
    const { request, rules } = judged({ rules: { 'client.token-after-401': { maxRepeats: 1 } } });
    request({ accessToken: FINGERPRINT, status: 401 });
    request({ accessToken: FINGERPRINT, status: 401, client: '10.0.0.2' });
    request({ accessToken: FINGERPRINT, status: 401 });
    expect(rules()).toEqual([]);
    request({ accessToken: FINGERPRINT, status: 401 });
    expect(rules()).toEqual(['client.token-after-401']);
  });

  it('says nothing when switched off', () => {
    const { request, findings } = judged({ rules: { 'client.token-after-401': { enabled: false } } });
    for (let n = 0; n < 3; n += 1) request({ accessToken: FINGERPRINT, status: 401 });
    expect(findings).toEqual([]);
  });
});

describe('client.login-instead-of-refresh and client.login-burst', () => {
  it('counts successful logins per account in the window, told once per burst', () => {
    const { request, rules, findings } = judged();
    for (let n = 0; n < 5; n += 1) request(login({ time: NOW + n * 1000 }));
    expect(rules()).toEqual([]);
    request(login({ time: NOW + 5000 }));
    request(login({ time: NOW + 6000 }));
    expect(rules()).toEqual(['client.login-instead-of-refresh']);
    expect(findings[0]).toMatchObject({ account: 'a@example.com', requestId: 'req-6', route: `POST ${LOGIN_ROUTE}` });
    expect(findings[0]!.detail).toMatch(/^6 logins of the account within 60000 ms; at most 5 allowed/);
    // A minute later the burst is over; a new one is told again.
    for (let n = 0; n < 6; n += 1) request(login({ time: NOW + 120_000 + n }));
    expect(rules()).toEqual(['client.login-instead-of-refresh', 'client.login-instead-of-refresh']);
  });

  it('does not count a login after a refused refresh from the same address: section 5.5 asks for it', () => {
    const { request, rules } = judged({ rules: { 'client.login-burst': { enabled: false } } });
    const refused = { method: 'POST', route: '/v1/auth/refresh', status: 401, account: undefined };
    for (let n = 0; n < 8; n += 1) {
      request(refused);
      request(login());
    }
    expect(rules()).toEqual([]);
    // Without the refused refresh before each, the same logins are too many.
    for (let n = 0; n < 6; n += 1) request(login({ time: NOW + 1 }));
    expect(rules()).toEqual(['client.login-instead-of-refresh']);
  });

  it('counts failed logins for the burst only, per client address, with thresholds from the fixture', () => {
    const { request, rules, findings } = judged({ rules: { 'client.login-burst': { maxLogins: 3, windowMs: 1000 } } });
    for (let n = 0; n < 3; n += 1) request(login({ status: 401, account: undefined, time: NOW + n * 10 }));
    request(login({ status: 401, account: undefined, time: NOW + 40, client: '10.0.0.9' }));
    expect(rules()).toEqual([]);
    request(login({ status: 429, account: undefined, time: NOW + 50 }));
    expect(rules()).toEqual(['client.login-burst']);
    expect(findings[0]!.detail).toBe('4 login attempts from 127.0.0.1 within 1000 ms; at most 3 allowed');
    expect(findings[0]!.account).toBeUndefined();
  });

  it('leaves logins spread over time alone', () => {
    const { request, findings } = judged();
    for (let n = 0; n < 30; n += 1) request(login({ time: NOW + n * 20_000 }));
    expect(findings).toEqual([]);
  });
});

describe('client.refresh-token-reused and client.token-in-query', () => {
  it('reports each replayed refresh token, with the account', () => {
    const { request, findings } = judged();
    request({ method: 'POST', route: '/v1/auth/refresh', status: 401, refreshToken: 'reused', account: 'a@example.com' });
    expect(findings).toMatchObject([{ rule: 'client.refresh-token-reused', account: 'a@example.com', route: 'POST /v1/auth/refresh' }]);
  });

  it('reports a token in a query string, naming the parameter or the shape', () => {
    const { request, findings } = judged();
    request({ queryToken: { parameter: 'access_token' }, status: 401 });
    request({ route: undefined, status: 404, queryToken: { shape: 'jwt' } });
    expect(findings.map((finding) => [finding.rule, finding.route, finding.detail])).toEqual([
      ['client.token-in-query', `GET ${STATION_ROUTE}`, 'a query parameter named access_token: tokens go in the Authorization header and passwords in the body, never in a URL'],
      ['client.token-in-query', 'GET (no route)', 'a query value shaped like a JWT: tokens go in the Authorization header, never in a URL'],
    ]);
  });
});

describe('client.unlock-offline-station', () => {
  it("finds an unlock of a station this client last read as offline, naming station and lock", () => {
    const { request, findings } = judged();
    request(read('offline'));
    request(unlock({ status: 200 }));
    expect(findings).toMatchObject([{ rule: 'client.unlock-offline-station', token: 'S-1', lockId: '1', account: 'a@example.com' }]);
  });

  it('leaves alone an unlock after a read that showed it online again, one sent with the read in flight, and other clients', () => {
    const { request, findings } = judged();
    request(read('offline'));
    request(read('online'));
    request(unlock());
    // In flight: the unlock arrived before the offline answer went out.
    request(read('offline', { arrivalsAtAnswer: 5 }));
    request(unlock());
    // Another account, another address, another station: none of them read S-1 as offline.
    request(unlock({ account: 'b@example.com' }));
    request(unlock({ client: '10.0.0.2' }));
    request(unlock({ station: 'S-2' }));
    // Never read at all; refused unlocks.
    request(unlock({ station: 'S-3' }));
    request(unlock({ status: 401, account: undefined }));
    expect(findings).toEqual([]);
  });
});

describe("the client judge's memory and switches", () => {
  it('holds at most its capacity per map, oldest forgotten first', () => {
    const { judge, request, rules } = judged({}, 50);
    for (let n = 0; n < 200; n += 1) {
      request({ accessToken: `fp-${n}`, status: 401, client: `10.0.${n >> 8}.${n & 255}` });
      request(login({ account: `user-${n}@example.com`, client: `10.1.${n >> 8}.${n & 255}` }));
      request(read('offline', { station: `S-${n}` }));
    }
    expect(judge.sizes).toMatchObject({ refused: 50, accounts: 50, clients: 50, offlineReads: 50 });
    // The newest are remembered, the oldest forgotten.
    request(unlock({ station: 'S-199' }));
    request(unlock({ station: 'S-0' }));
    expect(rules()).toEqual(['client.unlock-offline-station']);
  });

  it('does nothing with judge.enabled false', () => {
    const { judge, request, findings } = judged({ enabled: false });
    expect(judge.enabled).toBe(false);
    request({ accessToken: FINGERPRINT, status: 401 });
    request({ accessToken: FINGERPRINT, status: 401, queryToken: { parameter: 'token' }, refreshToken: 'reused' });
    expect(findings).toEqual([]);
    expect(judge.sizes).toEqual({ refused: 0, accounts: 0, clients: 0, offlineReads: 0, refreshRefused: 0 });
  });

  it('never puts the fingerprint of a token in a finding', () => {
    const { request, findings } = judged();
    for (let n = 0; n < 3; n += 1) request({ accessToken: FINGERPRINT, status: 401, queryToken: { shape: 'refresh-token' } });
    expect(findings.length).toBeGreaterThan(0);
    expect(JSON.stringify(findings)).not.toContain(FINGERPRINT);
  });
});
