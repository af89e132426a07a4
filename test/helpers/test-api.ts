/** Builds the API over a fake gateway for `inject()` tests, with a few request helpers. */
import type { LightMyRequestResponse } from 'fastify';
import { buildApi, type BuildApiOptions } from '../../src/service/build-api.js';
import type { ApiInstance } from '../../src/service/http/api-instance.js';
import type { TokenPair } from '../../src/service/http/api-schemas.js';
import type { Fixture } from '../../src/fixture/fixture-schema.js';
import { FakeGateway } from './fake-gateway.js';
import { ALICE, testFixture } from './test-fixture.js';

/** A known secret, so tests can forge tokens with it (and with others). */
export const TEST_SECRET = 'test-secret-that-is-at-least-32-bytes-long';

export interface TestApi {
  app: ApiInstance;
  gateway: FakeGateway;
  fixture: Fixture;
  login(account?: { email: string; password: string }): Promise<TokenPair>;
  get(url: string, accessToken?: string): Promise<LightMyRequestResponse>;
  post(url: string, body?: unknown, accessToken?: string): Promise<LightMyRequestResponse>;
}

export async function buildTestApi(options: Partial<BuildApiOptions> & { api?: Partial<Fixture['api']> } = {}): Promise<TestApi> {
  const { api, ...rest } = options;
  const fixture = rest.fixture ?? testFixture(api);
  const gateway = new FakeGateway(fixture);
  const app = await buildApi({ fixture, gateway, jwtSecret: TEST_SECRET, env: {}, ...rest });
  const bearer = (accessToken: string | undefined): Record<string, string> => (accessToken ? { authorization: `Bearer ${accessToken}` } : {});
  const post = (url: string, body?: unknown, accessToken?: string): Promise<LightMyRequestResponse> =>
    app.inject({
      method: 'POST',
      url,
      headers: { ...bearer(accessToken), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
  return {
    app,
    gateway,
    fixture,
    post,
    get: (url, accessToken) => app.inject({ method: 'GET', url, headers: bearer(accessToken) }),
    login: async (account = ALICE) => {
      const response = await post('/v1/auth/login', account);
      if (response.statusCode !== 200) throw new Error(`login failed: ${response.statusCode} ${response.body}`);
      return response.json<TokenPair>();
    },
  };
}
