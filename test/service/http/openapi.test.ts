import { afterAll, beforeAll, expect, test } from 'vitest';
import { buildTestApi, type TestApi } from '../../helpers/test-api.js';

let api: TestApi;
let doc: {
  openapi: string;
  paths: Record<string, Record<string, { security?: unknown; responses: Record<string, unknown>; requestBody?: unknown; parameters?: { name: string }[] }>>;
  components: { securitySchemes: Record<string, unknown>; schemas: Record<string, { properties?: Record<string, unknown> }> };
};

beforeAll(async () => {
  api = await buildTestApi();
  const response = await api.get('/v1/openapi.json');
  expect(response.statusCode).toBe(200);
  expect(response.headers['content-type']).toMatch(/^application\/json/);
  doc = response.json();
});
afterAll(async () => {
  await api.app.close();
});

test('is an OpenAPI 3.1 document of every /v1 endpoint', () => {
  expect(doc.openapi).toBe('3.1.0');
  expect(Object.keys(doc.paths).sort()).toEqual(
    [
      '/v1/auth/login',
      '/v1/auth/refresh',
      '/v1/auth/revoke',
      '/v1/auth/revoke-all',
      '/v1/stations/{station_token}',
      '/v1/stations/{station_token}/locks/{lock_id}/unlock',
      '/v1/webhooks',
      '/v1/webhooks/{subpath}',
      '/v1/openapi.json',
    ].sort(),
  );
  expect(Object.keys(doc.paths['/v1/stations/{station_token}']!)).toEqual(['get']);
  expect(Object.keys(doc.paths['/v1/webhooks']!).sort()).toEqual(['delete', 'get', 'patch', 'post', 'put']);
});

test('is generated from the route schemas: bodies, parameters, responses, security', () => {
  const login = doc.paths['/v1/auth/login']!.post!;
  expect(login.requestBody).toMatchObject({ content: { 'application/json': { schema: { $ref: '#/components/schemas/Credentials' } } } });
  expect(doc.components.schemas.Credentials).toMatchObject({ required: ['email', 'password'], additionalProperties: false });
  expect(Object.keys(login.responses).sort()).toEqual(['200', '400', '401', '413', '415', '429', '500', '503', 'default']);
  expect(login.security).toEqual([]);

  const unlock = doc.paths['/v1/stations/{station_token}/locks/{lock_id}/unlock']!.post!;
  expect(unlock.parameters?.map((parameter) => parameter.name)).toEqual(['station_token', 'lock_id']);
  expect(unlock.security).toEqual([{ bearerAuth: [] }]);
  expect(unlock.responses['200']).toMatchObject({ content: { 'application/json': { schema: { $ref: '#/components/schemas/UnlockResult' } } } });
  expect(doc.components.schemas.UnlockResult!.properties).toMatchObject({ success: { type: 'boolean' } });
  expect(doc.components.securitySchemes).toMatchObject({ bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' }, controlToken: { type: 'http', scheme: 'bearer' } });
  expect(doc.paths['/v1/webhooks']!.get!.responses).toHaveProperty('501');
});
