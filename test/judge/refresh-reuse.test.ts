/**
 * `client.refresh-token-reused` has a consequence besides its finding: the replayed token's whole
 * family is revoked (RFC 9700, section 4.14.2), in both session stores. And the API's side of the
 * client judge: the observation is built from the request without any token in it, a token in a
 * query string is recognised by name or shape, and nothing is judged without a listener.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { JudgeFinding } from '../../src/judge/judge-log.js';
import { tokenInQuery } from '../../src/service/http/client-judging.js';
import { buildTestApi, type TestApi } from '../helpers/test-api.js';
import { ALICE, testFixture } from '../helpers/test-fixture.js';
import { sessionStoresForFile } from '../helpers/redis-server.js';
import type { TokenPair } from '../../src/service/http/api-schemas.js';

const STATION = '/v1/stations/S-1';
const STORES = sessionStoresForFile('judge').each;
const apis: TestApi[] = [];
afterEach(async () => {
  await Promise.all(apis.splice(0).map((api) => api.app.close()));
});


async function judgedApi(options: Parameters<typeof buildTestApi>[0] = {}): Promise<{ api: TestApi; findings: JudgeFinding[] }> {
  const findings: JudgeFinding[] = [];
  const api = await buildTestApi({ onJudgeFinding: (finding) => findings.push(finding), ...options });
  apis.push(api);
  return { api, findings };
}

describe.each(STORES)('a replayed refresh token (%s store)', (_kind, store) => {
  it('is a finding with the account, and its whole family is revoked', async () => {
    const { api, findings } = await judgedApi(store());
    const first = await api.login();
    const other = await api.login();
    const rotated = (await api.post('/v1/auth/refresh', { refreshToken: first.refreshToken })).json<TokenPair>();
    expect((await api.get(STATION, rotated.accessToken)).statusCode).toBe(200);
    expect(findings).toEqual([]);

    expect((await api.post('/v1/auth/refresh', { refreshToken: first.refreshToken })).statusCode).toBe(401);
    expect(findings).toMatchObject([{ rule: 'client.refresh-token-reused', party: 'client', account: ALICE.email, route: 'POST /v1/auth/refresh' }]);
    // The family is over: the newest pair of it too, whoever holds it.
    expect((await api.get(STATION, rotated.accessToken)).statusCode).toBe(401);
    expect((await api.post('/v1/auth/refresh', { refreshToken: rotated.refreshToken })).statusCode).toBe(401);
    // Another login of the same account is another family, untouched.
    expect((await api.get(STATION, other.accessToken)).statusCode).toBe(200);
    const text = JSON.stringify(findings);
    for (const token of [first.accessToken, first.refreshToken, rotated.accessToken, rotated.refreshToken]) expect(text).not.toContain(token);
  });

  it('is a finding on logout with a rotated token as well, which ends the family', async () => {
    const { api, findings } = await judgedApi(store());
    const first = await api.login();
    const rotated = (await api.post('/v1/auth/refresh', { refreshToken: first.refreshToken })).json<TokenPair>();
    expect((await api.post('/v1/auth/revoke', { refreshToken: first.refreshToken })).statusCode).toBe(200);
    expect(findings.map((finding) => finding.rule)).toEqual(['client.refresh-token-reused']);
    expect((await api.get(STATION, rotated.accessToken)).statusCode).toBe(401);
  });
});

describe("the API's side of the client judge", () => {
  it('recognises a token in a query string by its name or its shape, and nothing else', () => {
    expect(tokenInQuery('/v1/stations/S-1?access_token=x')).toEqual({ parameter: 'access_token' });
    expect(tokenInQuery('/v1/stations/S-1?a=1&Refresh-Token=')).toEqual({ parameter: 'Refresh-Token' });
    expect(tokenInQuery('/v1/stations/S-1?x=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhIn0.c2ln')).toEqual({ shape: 'jwt' });
    expect(tokenInQuery(`/v1/auth/refresh?rt=${'A'.repeat(43)}`)).toEqual({ shape: 'refresh-token' });
    for (const url of ['/v1/stations/S-1', '/v1/stations/S-1?', '/v1/stations/S-1?verbose=1&page=2', '/v1/stations/S-1?tokens=3']) expect(tokenInQuery(url), url).toBeUndefined();
  });

  it('judges through a real request: a token in the query, then a refused bearer token sent again', async () => {
    const { api, findings } = await judgedApi();
    const pair = await api.login();
    expect((await api.get(`${STATION}?access_token=${pair.accessToken}`)).statusCode).toBe(401);
    for (let n = 0; n < 3; n += 1) expect((await api.get(STATION, 'not-a-token')).statusCode).toBe(401);
    expect(findings.map((finding) => finding.rule)).toEqual(['client.token-in-query', 'client.token-after-401']);
    expect(findings[1]).toMatchObject({ requestId: expect.stringMatching(/^req-/), route: 'GET /v1/stations/:station_token' });
    expect(JSON.stringify(findings)).not.toContain(pair.accessToken);
  });

  it('installs nothing with judge.enabled false, or without a listener', async () => {
    const { api, findings } = await judgedApi({ fixture: { ...testFixture(), judge: { enabled: false } } });
    for (let n = 0; n < 3; n += 1) expect((await api.get(`${STATION}?access_token=x`, 'not-a-token')).statusCode).toBe(401);
    expect(findings).toEqual([]);
    expect(api.app.hasRequestDecorator('clientFacts')).toBe(false);
    const unjudged = await buildTestApi();
    apis.push(unjudged);
    expect(unjudged.app.hasRequestDecorator('clientFacts')).toBe(false);
    const judged = await judgedApi();
    expect(judged.api.app.hasRequestDecorator('clientFacts')).toBe(true);
  });
});
