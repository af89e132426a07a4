/**
 * The served OpenAPI document against a real validator and against the server's real answers
 * (issue 19, "The contracts"): swagger-parser accepts it as OpenAPI 3.1, and every answer of every
 * documented operation, successes and errors, has a status the operation documents and a body
 * that its documented schema (ajv, JSON Schema 2020-12, formats checked) accepts.
 */
import SwaggerParser from '@apidevtools/swagger-parser';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type StartedSimulator } from '../../../src/simulator/start-simulator.js';
import { expectJudgeFindings } from '../../helpers/judge-findings.js';

expectJudgeFindings('calls every documented answer, a 401 followed by the same token and a replayed refresh token among them');

interface Operation {
  operationId: string;
  security: Record<string, string[]>[];
  requestBody?: { required: boolean };
  responses: Record<string, { headers?: Record<string, unknown>; content?: Record<string, { schema: unknown }> }>;
}
interface Doc {
  openapi: string;
  servers: { url: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Record<string, unknown>>; securitySchemes: Record<string, unknown> };
}

const CONTROL_TOKEN = 'openapi-conformance-control-token';
const BASE = 'https://station-sim.invalid/openapi.json';

let sim: StartedSimulator<true>;
let doc: Doc;
let ajv: InstanceType<typeof Ajv2020.default>;
let accessToken: string;
let refreshToken: string;
/** `operationId` → the statuses the server answered it with during this file. */
const seen = new Map<string, Set<number>>();

beforeAll(async () => {
  sim = await startSimulator({ fixture: 'ci', httpPort: 0, mqttPort: 0, controlToken: CONTROL_TOKEN });
  const response = await fetch(`${sim.apiUrl}/v1/openapi.json`);
  expect(response.status).toBe(200);
  doc = (await response.json()) as Doc;
  // Every schema of every answer under one root, so `#/components/schemas/...` resolves.
  const responses: Record<string, unknown> = {};
  for (const item of Object.values(doc.paths)) {
    for (const operation of Object.values(item)) {
      for (const [status, answer] of Object.entries(operation.responses)) {
        const schema = answer.content?.['application/json']?.schema;
        if (schema !== undefined) responses[`${operation.operationId}-${status}`] = schema;
      }
    }
  }
  ajv = new Ajv2020.default({ strict: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addSchema({ $id: BASE, components: doc.components, responses });
  const login = await call('POST', '/v1/auth/login', { body: { email: 'ci@example.com', password: 'ci-password' } });
  ({ accessToken, refreshToken } = login.json as { accessToken: string; refreshToken: string });
}, 30_000);
afterAll(async () => {
  await sim?.stop();
});

interface CallOptions {
  body?: unknown;
  /** Sent as it is, with this content type. */
  raw?: { type: string; text: string };
  bearer?: string | null;
}

/**
 * Makes the request and checks the answer against the document: the status is one the
 * operation lists (not only `default`), and the body validates against its schema.
 */
async function call(method: string, path: string, options: CallOptions = {}): Promise<{ status: number; json: unknown }> {
  const control = path.startsWith('/sim/v1/');
  const bearer = options.bearer === undefined ? (control ? CONTROL_TOKEN : accessToken) : options.bearer;
  const headers: Record<string, string> = bearer === null || bearer === undefined ? {} : { authorization: `Bearer ${bearer}` };
  let body: string | undefined;
  if (options.raw) {
    headers['content-type'] = options.raw.type;
    body = options.raw.text;
  } else if (options.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(options.body);
  }
  const response = await fetch(`${sim.apiUrl}${path}`, { method, headers, ...(body === undefined ? {} : { body }) });
  const json: unknown = await response.json();
  const [template, operation] = operationOf(method, path);
  const label = `${method} ${template} ${response.status} ${JSON.stringify(json).slice(0, 200)}`;
  expect(Object.keys(operation.responses), label).toContain(String(response.status));
  expect(response.headers.get('content-type'), label).toMatch(/^application\/json/);
  // The headers it documents as always sent on this answer (the 401 challenge) are there.
  if (response.status === 401) expect(operation.responses['401']!.headers, label).toHaveProperty('WWW-Authenticate');
  if (response.status === 401) expect(response.headers.get('www-authenticate'), label).toMatch(/^Bearer realm="station-sim( control plane)?"/);
  if (response.status === 426) expect(operation.responses['426']!.headers, label).toHaveProperty('Upgrade');
  if (response.status === 426) expect(response.headers.get('upgrade'), label).toBe('websocket');
  const validate = ajv.getSchema(`${BASE}#/responses/${operation.operationId}-${response.status}`);
  expect(validate, label).toBeDefined();
  expect(validate!(json), `${label}: ${ajv.errorsText(validate!.errors)}`).toBe(true);
  const statuses = seen.get(operation.operationId) ?? new Set<number>();
  statuses.add(response.status);
  seen.set(operation.operationId, statuses);
  return { status: response.status, json };
}

/** The documented operation a concrete path and method fall under. */
function operationOf(method: string, path: string): [string, Operation] {
  const bare = path.split('?')[0]!;
  for (const [template, item] of Object.entries(doc.paths)) {
    const pattern = new RegExp(`^${template.replace(/\./g, '\\.').replace(/\{subpath\}/, '.+').replace(/\{[^}]+\}/g, '[^/]+')}$`);
    const operation = item[method.toLowerCase()];
    if (operation && pattern.test(bare)) return [template, operation];
  }
  throw new Error(`${method} ${path} is not in the document`);
}

describe('the document', () => {
  it('is OpenAPI 3.1 that swagger-parser validates', async () => {
    expect(doc.openapi).toBe('3.1.0');
    await expect(SwaggerParser.validate(structuredClone(doc) as never)).resolves.toBeDefined();
  });

  it('names the server that served it, its components and every operation', () => {
    expect(doc.servers[0]!.url).toBe(sim.apiUrl);
    expect(Object.keys(doc.components.schemas)).toEqual(
      expect.arrayContaining(['TokenPair', 'Station', 'Lock', 'UnlockResult', 'Error', 'SimStation', 'Fault', 'FaultSpec', 'HealthReply', 'JournalReply', 'ApiFault', 'ApiFaultSpec']),
    );
    const ids = Object.values(doc.paths).flatMap((item) => Object.values(item).map((operation) => operation.operationId));
    expect(ids.every((id) => typeof id === 'string' && id.length > 0)).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('says which routes are public and which need a token', () => {
    const security = (method: string, path: string) => doc.paths[path]![method]!.security;
    for (const path of ['/v1/auth/login', '/v1/auth/refresh', '/v1/auth/revoke', '/v1/openapi.json', '/v1/webhooks', '/v1/webhooks/{subpath}']) expect(security('post' in doc.paths[path]! ? 'post' : 'get', path)).toEqual([]);
    expect(security('get', '/v1/stations/{station_token}')).toEqual([{ bearerAuth: [] }]);
    expect(security('post', '/v1/auth/revoke-all')).toEqual([{ bearerAuth: [] }]);
    expect(security('get', '/sim/v1/health')).toEqual([{ controlToken: [] }, {}]);
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(['bearerAuth', 'controlToken']);
  });

  it('marks timestamps as date-time, the optional reboot body and the 201s', () => {
    const props = (name: string) => doc.components.schemas[name]!.properties as Record<string, { format?: string }>;
    expect(props('Station').lastConnection!.format).toBe('date-time');
    expect(props('Lock').lastUpdated!.format).toBe('date-time');
    expect(props('SimStation').lastConnection!.format).toBe('date-time');
    expect(props('ClockReply').now!.format).toBe('date-time');
    expect(doc.paths['/sim/v1/stations/{token}/reboot']!.post!.requestBody!.required).toBe(false);
    expect(Object.keys(doc.paths['/sim/v1/stations/{token}/faults']!.post!.responses)).toContain('201');
    expect(Object.keys(doc.paths['/sim/v1/stations/{token}/faults']!.post!.responses)).not.toContain('200');
    expect(Object.keys(doc.paths['/sim/v1/api-faults']!.post!.responses)).toContain('201');
  });
});

describe('real answers match the document', () => {
  it('/v1/auth', async () => {
    expect((await call('POST', '/v1/auth/login', { body: { email: 'ci@example.com', password: 'wrong' } })).status).toBe(401);
    expect((await call('POST', '/v1/auth/login', { body: { email: 'ci@example.com' } })).status).toBe(400);
    expect((await call('POST', '/v1/auth/login', { raw: { type: 'text/plain', text: 'hello' } })).status).toBe(415);
    expect((await call('POST', '/v1/auth/login', { raw: { type: 'application/json', text: `{"email":"${'a'.repeat(20_000)}"}` } })).status).toBe(413);

    const refreshed = await call('POST', '/v1/auth/refresh', { body: { refreshToken } });
    expect(refreshed.status).toBe(200);
    // Used again after rotation: 401, and the session it belonged to is revoked.
    expect((await call('POST', '/v1/auth/refresh', { body: { refreshToken } })).status).toBe(401);
    expect((await call('POST', '/v1/auth/refresh', { body: {} })).status).toBe(400);
    const login = async () => (await call('POST', '/v1/auth/login', { body: { email: 'ci@example.com', password: 'ci-password' } })).json as { accessToken: string; refreshToken: string };
    accessToken = (await login()).accessToken;

    const ended = await login();
    expect((await call('POST', '/v1/auth/revoke', { body: { refreshToken: ended.refreshToken } })).status).toBe(200);
    // As its description says: the session's access token ends with it.
    expect((await call('GET', '/v1/stations/CI-1', { bearer: ended.accessToken })).status).toBe(401);
    expect((await call('POST', '/v1/auth/revoke', { body: { token: 'x' } })).status).toBe(400);
    expect((await call('POST', '/v1/auth/revoke-all', { bearer: null })).status).toBe(401);
    expect((await call('POST', '/v1/auth/revoke-all', { bearer: 'not-a-jwt' })).status).toBe(401);
  });

  it('/v1/stations', async () => {
    expect((await call('GET', '/v1/stations/CI-1')).status).toBe(200);
    expect((await call('GET', '/v1/stations/CI-1', { bearer: null })).status).toBe(401);
    expect((await call('GET', '/v1/stations/NO-SUCH-STATION')).status).toBe(404);

    expect((await call('POST', '/v1/stations/CI-1/locks/1/unlock')).json).toEqual({ success: true });
    expect((await call('POST', '/v1/stations/CI-OFFLINE/locks/1/unlock')).json).toMatchObject({ success: false });
    expect((await call('POST', '/v1/stations/CI-1/locks/9/unlock')).status).toBe(404);
    expect((await call('POST', '/v1/stations/CI-1/locks/1/unlock', { bearer: null })).status).toBe(401);
    // The outcome-unknown answer, injected rather than waited for.
    expect((await call('POST', '/sim/v1/api-faults', { body: { route: 'POST /v1/stations/:station_token/locks/:lock_id/unlock', kind: 'status', status: 504, count: 1 } })).status).toBe(201);
    expect((await call('POST', '/v1/stations/CI-2/locks/1/unlock')).status).toBe(504);
  });

  it('/v1/openapi.json and /v1/webhooks', async () => {
    expect((await call('GET', '/v1/openapi.json', { bearer: null })).status).toBe(200);
    for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']) {
      expect((await call(method, '/v1/webhooks', { bearer: null })).status).toBe(501);
      expect((await call(method, '/v1/webhooks/some/hook', { bearer: null, ...(method === 'GET' ? {} : { raw: { type: 'text/xml', text: '<x/>' } }) })).status).toBe(501);
    }
  });

  it('/sim/v1/asyncapi.json', async () => {
    const { status, json } = await call('GET', '/sim/v1/asyncapi.json');
    expect(status).toBe(200);
    expect(json).toMatchObject({ asyncapi: '3.0.0' });
    expect((await call('GET', '/sim/v1/asyncapi.json', { bearer: null })).status).toBe(401);
  });

  it('/sim/v1/events, the event stream, without its WebSocket upgrade', async () => {
    const plain = await call('GET', '/sim/v1/events');
    expect(plain.status).toBe(426);
    expect((await call('GET', '/sim/v1/events', { bearer: null })).status).toBe(401);
    // The upgrade itself (101) is the event stream's own tests' (test/control/event-stream*.test.ts).
    expect(Object.keys(doc.paths['/sim/v1/events']!.get!.responses)).toEqual(expect.arrayContaining(['101', '400', '401', '426']));
  });

  it('/sim/v1/judge', async () => {
    const { status, json } = await call('GET', '/sim/v1/judge');
    expect(status).toBe(200);
    expect(json).toMatchObject({ summary: expect.any(Object), findings: expect.any(Array) });
    expect((await call('GET', '/sim/v1/judge', { bearer: null })).status).toBe(401);
  });

  it('/sim/v1 health, clock, journal', async () => {
    expect((await call('GET', '/sim/v1/health')).status).toBe(200);
    expect((await call('GET', '/sim/v1/health', { bearer: null })).status).toBe(401);
    expect((await call('GET', '/sim/v1/clock')).status).toBe(200);
    expect((await call('GET', '/sim/v1/clock', { bearer: 'wrong' })).status).toBe(401);
    expect((await call('POST', '/sim/v1/clock/advance', { body: { ms: 1000 } })).status).toBe(409);
    expect((await call('POST', '/sim/v1/clock/advance', { body: { ms: -1 } })).status).toBe(400);

    const journal = await call('GET', '/sim/v1/journal?kind=api&limit=50');
    expect(journal.status).toBe(200);
    expect((journal.json as { entries: unknown[] }).entries.length).toBeGreaterThan(0);
    expect((await call('GET', '/sim/v1/journal?kind=command')).status).toBe(200);
    expect((await call('GET', '/sim/v1/journal?limit=0')).status).toBe(400);
    expect((await call('DELETE', '/sim/v1/journal', { bearer: null })).status).toBe(401);
    expect((await call('DELETE', '/sim/v1/journal')).status).toBe(200);
  });

  it('/sim/v1 stations and their faults', async () => {
    expect((await call('GET', '/sim/v1/stations')).status).toBe(200);
    expect((await call('GET', '/sim/v1/stations/CI-1')).status).toBe(200);
    expect((await call('GET', '/sim/v1/stations/NO-SUCH-STATION')).status).toBe(404);

    expect((await call('POST', '/sim/v1/stations/CI-FLEET-01/connection', { body: { online: false } })).status).toBe(200);
    expect((await call('POST', '/sim/v1/stations/CI-FLEET-01/connection', { body: { online: true } })).status).toBe(200);
    expect((await call('POST', '/sim/v1/stations/CI-FLEET-01/connection', { body: { online: 'yes' } })).status).toBe(400);
    expect((await call('POST', '/sim/v1/stations/NO-SUCH-STATION/connection', { body: { online: true } })).status).toBe(404);

    expect((await call('POST', '/sim/v1/stations/CI-FLEET-02/battery', { body: { voltage: 11.5 } })).status).toBe(200);
    expect((await call('POST', '/sim/v1/stations/CI-FLEET-02/battery', { body: { voltage: 1000 } })).status).toBe(400);
    // The ci fixture's stations have no link of their own to change (docs/links.md): 400, as a bad body is.
    expect((await call('PUT', '/sim/v1/stations/CI-FLEET-02/link', { body: { profile: 'lte-m' } })).status).toBe(400);
    expect((await call('PUT', '/sim/v1/stations/CI-FLEET-02/link', { body: { latencyMs: -1 } })).status).toBe(400);

    // No body at all: the body is optional.
    expect((await call('POST', '/sim/v1/stations/CI-FLEET-03/reboot')).status).toBe(200);
    expect((await call('POST', '/sim/v1/stations/CI-FLEET-04/reboot', { body: { downMs: 10 } })).status).toBe(200);
    expect((await call('POST', '/sim/v1/stations/CI-FLEET-04/reboot', { body: { downMs: 'soon' } })).status).toBe(400);

    expect((await call('POST', '/sim/v1/stations/CI-FLEET-05/locks/1/physical', { body: { action: 'jam' } })).status).toBe(200);
    expect((await call('POST', '/sim/v1/stations/CI-FLEET-05/locks/9/physical', { body: { action: 'jam' } })).status).toBe(404);
    expect((await call('POST', '/sim/v1/stations/CI-FLEET-05/locks/1/physical', { body: { action: 'smash' } })).status).toBe(400);

    const fault = await call('POST', '/sim/v1/stations/CI-FLEET-06/faults', { body: { kind: 'delayAcks', delayMs: 100, count: 1 } });
    expect(fault.status).toBe(201);
    expect((await call('POST', '/sim/v1/stations/CI-FLEET-06/faults', { body: { kind: 'delayAcks' } })).status).toBe(400);
    expect((await call('POST', '/sim/v1/stations/NO-SUCH-STATION/faults', { body: { kind: 'reject' } })).status).toBe(404);
    expect((await call('DELETE', `/sim/v1/stations/CI-FLEET-06/faults/${(fault.json as { id: string }).id}`)).status).toBe(200);
    expect((await call('DELETE', '/sim/v1/stations/CI-FLEET-06/faults/no-such-fault')).status).toBe(404);
    expect((await call('DELETE', '/sim/v1/stations/CI-FLEET-06/faults')).status).toBe(200);
    expect((await call('DELETE', '/sim/v1/stations/NO-SUCH-STATION/faults')).status).toBe(404);
  });

  it('/sim/v1/api-faults and reset', async () => {
    const added = await call('POST', '/sim/v1/api-faults', { body: { kind: 'latency', latencyMs: 1, route: 'GET /v1/stations/:station_token' } });
    expect(added.status).toBe(201);
    expect((await call('POST', '/sim/v1/api-faults', { body: { kind: 'explode' } })).status).toBe(400);
    expect((await call('GET', '/sim/v1/api-faults')).status).toBe(200);
    expect((await call('DELETE', `/sim/v1/api-faults/${(added.json as { id: string }).id}`)).status).toBe(200);
    expect((await call('DELETE', '/sim/v1/api-faults/no-such-fault')).status).toBe(404);
    expect((await call('POST', '/sim/v1/api-faults', { body: { kind: 'status', status: 503 } })).status).toBe(201);
    expect((await call('DELETE', '/sim/v1/api-faults')).status).toBe(200);
    expect((await call('POST', '/sim/v1/reset', { bearer: null })).status).toBe(401);
    expect((await call('POST', '/sim/v1/reset')).status).toBe(200);
    // Last: it ends every session of the account.
    expect((await call('POST', '/v1/auth/revoke-all')).status).toBe(200);
    expect((await call('GET', '/v1/stations/CI-1')).status).toBe(401);
  });

  it('every documented operation was exercised', () => {
    const ids = Object.values(doc.paths).flatMap((item) => Object.values(item).map((operation) => operation.operationId));
    expect(ids.filter((id) => !seen.has(id))).toEqual([]);
  });
});
