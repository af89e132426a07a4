/**
 * Property-based fuzzing of every route of the API and the control plane (issue 15, "Proven in the
 * suite"): whatever the method, path, headers and body, the server never answers 5xx (but the
 * webhooks' documented 501), never crashes, answers every error with a JSON object whose `message`
 * is a string, and never echoes a token or a password. Bounded in count and in time.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { startSimulator, type StartedSimulator } from '../../../src/simulator/start-simulator.js';
import { expectJudgeFindings } from '../../helpers/judge-findings.js';

expectJudgeFindings('fuzzed requests repeat tokens after their 401 answers');

const controlToken = 'fuzz-control-token-0123456789abcdef';
const PASSWORD = 'ci-password';
let sim: StartedSimulator;
let routes: { method: string; path: string }[] = [];
let secrets: { accessToken: string; refreshToken: string };

beforeAll(async () => {
  sim = await startSimulator({ fixture: 'ci', controlToken });
  const login = await fetch(`${sim.apiUrl}/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'ci@example.com', password: PASSWORD }) });
  expect(login.status).toBe(200);
  secrets = (await login.json()) as typeof secrets;
  // Every documented route, so a new one is fuzzed without anyone adding it here.
  const document = (await (await fetch(`${sim.apiUrl}/v1/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
  routes = Object.entries(document.paths).flatMap(([path, operations]) => Object.keys(operations).map((method) => ({ method: method.toUpperCase(), path })));
  routes.push({ method: 'GET', path: '/sim/v1/events' });
});
afterAll(async () => sim.stop());

/** Path parameters: real ones, near misses and hostile ones. */
const parameter = fc.oneof(
  fc.constantFrom('CI-1', 'CI-2', 'CI-25', '1', '2', '4', 'ST-1001', ''),
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.constantFrom('..', '%2e%2e', '%00', '%ff', '%', '%%', '\u202e', 'a'.repeat(300), '../../sim/v1/reset', 'CI-1%2Flocks%2F1'),
);

const method = fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD');

/** Authorization headers: none, the real ones, and forged or malformed ones. */
function authorization(): fc.Arbitrary<string | undefined> {
  const forged = `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${Buffer.from('{"sub":"ci","gen":0}').toString('base64url')}.`;
  return fc.oneof(
    fc.constant(undefined),
    // The real credentials most often, so requests get past authentication to the routes' own checks.
    { arbitrary: fc.constant(`Bearer ${secrets.accessToken}`), weight: 6 },
    { arbitrary: fc.constant(`Bearer ${controlToken}`), weight: 6 },
    fc.constant(`Bearer ${secrets.refreshToken}`),
    fc.constant(`Bearer ${forged}`),
    fc.constant(`Bearer ${secrets.accessToken.slice(0, -3)}abc`),
    fc.string({ maxLength: 60 }).map((text) => `Bearer ${text}`),
    fc.string({ maxLength: 60 }),
  );
}

const contentType = fc.oneof(
  { arbitrary: fc.constant('application/json'), weight: 6 },
  fc.constant(undefined),
  fc.constantFrom('application/json', 'application/json; charset=utf-8', 'application/json; charset=utf-16', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/json; charset'),
  fc.string({ maxLength: 30 }),
);

/** Bodies: JSON of the right shapes with wrong values, any JSON, and text that is not JSON. */
const body = fc.oneof(
  fc.constant(undefined),
  fc.record({ email: fc.oneof(fc.constant('ci@example.com'), fc.string()), password: fc.oneof(fc.constant(PASSWORD), fc.string()) }, { requiredKeys: [] }).map((value) => JSON.stringify(value)),
  fc.record({ refreshToken: fc.oneof(fc.constant('x'), fc.string(), fc.integer()) }).map((value) => JSON.stringify(value)),
  fc.record({ kind: fc.constantFrom('dropCommands', 'delayAcks', 'reject', 'latency', 'nope'), count: fc.integer(), delayMs: fc.integer() }, { requiredKeys: ['kind'] }).map((value) => JSON.stringify(value)),
  fc.record({ online: fc.anything(), voltage: fc.double(), downMs: fc.integer(), action: fc.string(), ms: fc.integer() }, { requiredKeys: [] }).map((value) => JSON.stringify(value)),
  fc.jsonValue({ maxDepth: 3 }).map((value) => JSON.stringify(value)),
  fc.string({ maxLength: 200 }),
  fc.constantFrom('{"__proto__":{"admin":true}}', '{"constructor":{"prototype":{"x":1}}}', '{', '[]', 'null', '"', '{"email":"a","email":"b"}'),
);

interface Attempt {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string | undefined;
}

const attempt: () => fc.Arbitrary<Attempt> = () =>
  fc
    .record({
      route: fc.constantFrom(...routes),
      method: fc.option(method, { nil: undefined }),
      parameters: fc.array(parameter, { minLength: 3, maxLength: 3 }),
      authorization: authorization(),
      contentType,
      body,
    })
    .map(({ route, method: other, parameters, authorization: auth, contentType: type, body: text }) => {
      let index = 0;
      const path = route.path.replace(/\{[^}]+\}/g, () => encodeURIComponent(parameters[index++ % parameters.length]!));
      const headers: Record<string, string> = {};
      if (auth !== undefined) headers.authorization = auth;
      if (type !== undefined) headers['content-type'] = type;
      const chosen = other ?? route.method;
      return { method: chosen, path, headers, body: chosen === 'GET' || chosen === 'HEAD' ? undefined : text };
    });

/** What must never appear in an answer. */
function leaked(text: string): string | undefined {
  for (const [name, secret] of [['access token', secrets.accessToken], ['refresh token', secrets.refreshToken], ['control token', controlToken], ['password', PASSWORD]] as const) {
    if (text.includes(secret)) return name;
  }
  return undefined;
}

describe('fuzzing every route', () => {
  it('never answers 5xx, always answers errors in JSON with a message, never echoes a secret', async () => {
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(attempt(), async ({ method: verb, path, headers, body: text }) => {
        let response: Response;
        try {
          response = await fetch(`${sim.apiUrl}${path}`, { method: verb, headers, ...(text === undefined ? {} : { body: text }), signal: AbortSignal.timeout(10_000) });
        } catch (error) {
          // fetch itself refuses some header values (a line break in a fuzzed header): no request went out.
          if (error instanceof TypeError && !(error as { cause?: unknown }).cause) return;
          throw new Error(`${verb} ${path}: no answer (${String((error as { cause?: unknown }).cause ?? error)})`);
        }
        const answer = await response.text();
        statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
        const webhook = path.startsWith('/v1/webhooks') && response.status === 501;
        expect(response.status >= 500 && !webhook, `${verb} ${path} answered ${response.status}: ${answer}`).toBe(false);
        expect(leaked(answer) ?? leaked(JSON.stringify([...response.headers])), `${verb} ${path}`).toBeUndefined();
        if (response.status >= 400 && verb !== 'HEAD') {
          expect(response.headers.get('content-type'), `${verb} ${path}`).toMatch(/^application\/json/);
          const parsed = JSON.parse(answer) as unknown;
          expect(parsed, `${verb} ${path}: ${answer}`).toMatchObject({ message: expect.any(String) });
        }
      }),
      { numRuns: 600, interruptAfterTimeLimit: 60_000, seed: Number(process.env.FUZZ_SEED ?? Date.now() % 2_147_483_647) },
    );
    // The process is still up and the fleet still answers.
    expect((await fetch(`${sim.controlUrl}/health`, { headers: { authorization: `Bearer ${controlToken}` } })).status).toBe(200);
    // Not only refusals: the fuzzer reached the routes' own answers too.
    expect([...statuses.keys()].some((status) => status < 300)).toBe(true);
  }, 120_000);
});
