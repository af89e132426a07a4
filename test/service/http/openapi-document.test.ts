/** The finishing pass over @fastify/swagger's output (src/service/http/openapi-document.ts), on small documents. */
import { expect, test } from 'vitest';
import { finishOpenApiDocument, type OpenApiDocument } from '../../../src/service/http/openapi-document.js';

const json = (schema: Record<string, unknown>) => ({ content: { 'application/json': { schema } } });

function documentOf(paths: OpenApiDocument['paths']): OpenApiDocument {
  return { openapi: '3.1.0', paths, components: {} };
}

test('titled schemas become components, nested ones too, and are referred to', () => {
  const lock = { title: 'Lock', type: 'object', properties: { lockId: { type: 'string' } } };
  const station = { title: 'Station', description: 'A station.', type: 'object', properties: { locks: { type: 'array', items: lock } } };
  const doc = finishOpenApiDocument(documentOf({ '/v1/s': { get: { responses: { 200: { description: 'ok', ...json(station) } } } } }));
  expect(doc.paths['/v1/s']!.get!.responses['200']!.content!['application/json']!.schema).toEqual({ $ref: '#/components/schemas/Station' });
  expect(doc.components.schemas!.Station).toMatchObject({ properties: { locks: { items: { $ref: '#/components/schemas/Lock' } } } });
  expect(doc.components.schemas!.Lock).toEqual(lock);
});

test('two different schemas under one title are refused', () => {
  const a = { title: 'Thing', type: 'object', properties: { a: { type: 'string' } } };
  const b = { title: 'Thing', type: 'object', properties: { b: { type: 'string' } } };
  const input = documentOf({
    '/v1/a': { get: { responses: { 200: { description: 'a', ...json(a) } } } },
    '/v1/b': { get: { responses: { 200: { description: 'b', ...json(b) } } } },
  });
  expect(() => finishOpenApiDocument(input)).toThrow(/Two different schemas are titled Thing/);
});

test('operations sharing one object get their own ids; wildcards get a name; security and common answers are filled in', () => {
  const shared = { responses: { 501: { description: 'no' } } };
  const input = documentOf({ '/v1/hooks/{*}': { get: shared, post: shared }, '/sim/v1/x': { delete: { operationId: 'clearX', responses: {} } } });
  (input.paths['/v1/hooks/{*}']!.get as Record<string, unknown>).parameters = [{ name: '*', in: 'path', required: true }];
  const doc = finishOpenApiDocument(input);
  const hooks = doc.paths['/v1/hooks/{subpath}']!;
  expect([hooks.get!.operationId, hooks.post!.operationId]).toEqual(['getV1HooksSubpath', 'postV1HooksSubpath']);
  expect(hooks.get!.security).toEqual([]);
  expect(hooks.post!.parameters).toEqual([{ name: 'subpath', in: 'path', required: true, description: expect.any(String) }]);
  expect(Object.keys(hooks.post!.responses).sort()).toEqual(['400', '413', '415', '429', '500', '501', 'default']);
  const clear = doc.paths['/sim/v1/x']!.delete!;
  expect(clear.operationId).toBe('clearX');
  expect(clear.security).toEqual([{ controlToken: [] }, {}]);
  expect(Object.keys(clear.responses).sort()).toEqual(['400', '401', '413', '415', '429', '500']);
  expect(doc.servers).toEqual([{ url: '/', description: expect.any(String) }]);
});

test('a body marked optional is not required', () => {
  const input = documentOf({ '/sim/v1/r': { post: { 'x-body-optional': true, requestBody: { required: true, content: { 'application/json': { schema: { type: 'object' } } } }, responses: {} } } });
  const post = finishOpenApiDocument(input).paths['/sim/v1/r']!.post!;
  expect(post.requestBody!.required).toBe(false);
  expect(post).not.toHaveProperty('x-body-optional');
});
