/**
 * Finishes the document `@fastify/swagger` builds from the route schemas into one that validating
 * tools and client generators take as it is:
 * - every schema with a `title` becomes a named component (`#/components/schemas/Station`) and is
 *   referred to wherever it appears, so generated clients get `Station`, not `InlineResponse200`;
 * - every operation has an `operationId` (the route's own, else one made from method and path);
 * - every operation says its security: the `/v1` bearer token, the control token on `/sim/v1`, or
 *   `security: []` on public routes;
 * - the answers any route can give, whatever its handler does, are listed on every operation
 *   (docs/api.md, "Limits"; error-handling.ts, request-rules.ts, server-limits.ts);
 * - a route whose body may be left out (`x-body-optional` in its schema) says so.
 * Titles are annotations: fastify's validation and serialisation ignore them.
 */
import { isDeepStrictEqual } from 'node:util';
import { BODY_OPTIONAL, CONTROL_SCHEME, errorResponseDescription } from './route-docs.js';

/** The parts of an OpenAPI 3.1 document this module reads and writes. */
export interface OpenApiDocument {
  openapi: string;
  servers?: { url: string; description?: string }[];
  paths: Record<string, Record<string, OpenApiOperation>>;
  components: { schemas?: Record<string, JsonSchema>; securitySchemes?: Record<string, unknown> };
  [key: string]: unknown;
}

export interface OpenApiOperation {
  operationId?: string;
  security?: Record<string, string[]>[];
  requestBody?: { required?: boolean; content: Record<string, { schema: JsonSchema }> };
  responses: Record<string, { description: string; headers?: Record<string, { description: string; schema: JsonSchema }>; content?: Record<string, { schema: JsonSchema }> }>;
  [key: string]: unknown;
}

type JsonSchema = Record<string, unknown>;


const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const BODY_METHODS = new Set(['post', 'put', 'patch', 'delete']);
const ERROR_REF = { $ref: '#/components/schemas/Error' };

/** Returns a finished copy; the input is left as it is (`@fastify/swagger` caches it). */
export function finishOpenApiDocument(input: OpenApiDocument): OpenApiDocument {
  // Not structuredClone: it keeps objects shared (one schema of several methods), and each
  // operation here must be its own.
  const doc = JSON.parse(JSON.stringify(input)) as OpenApiDocument;
  renameWildcards(doc);
  const schemas: Record<string, JsonSchema> = { ...doc.components.schemas };
  doc.components.schemas = schemas;
  const name = (schema: JsonSchema): JsonSchema => hoist(schema, schemas);

  const used = new Set<string>();
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      if (!METHODS.includes(method)) continue;
      operation.operationId = uniqueId(operation.operationId ?? derivedId(method, path), method, used);
      operation.security ??= securityOf(path);
      if (operation.requestBody) {
        if (operation[BODY_OPTIONAL] === true) operation.requestBody.required = false;
        for (const media of Object.values(operation.requestBody.content)) media.schema = name(media.schema);
      }
      delete operation[BODY_OPTIONAL];
      for (const response of Object.values(operation.responses)) {
        for (const media of Object.values(response.content ?? {})) {
          media.schema = name(media.schema);
          // The response's own description says what the answer means; the schema's is the component's.
          if (typeof media.schema.$ref === 'string') delete media.schema.description;
        }
      }
      addCommonResponses(path, method, operation);
      addResponseHeaders(path, operation);
    }
  }
  doc.servers ??= [{ url: '/', description: 'The server that serves this document' }];
  return doc;
}

/**
 * The headers error-handling.ts and server-limits.ts add: the challenge of every 401 (RFC 6750,
 * section 3), `Upgrade` on the 426 of a WebSocket route (RFC 9110, section 15.5.22), and
 * `Retry-After` on a 429, and on a `/v1` 503 that says when to try again.
 */
function addResponseHeaders(path: string, operation: OpenApiOperation): void {
  const unauthorized = operation.responses['401'];
  if (unauthorized) {
    const realm = path.startsWith('/sim/v1/') ? 'station-sim control plane' : 'station-sim';
    unauthorized.headers = {
      'WWW-Authenticate': { description: `\`Bearer realm="${realm}"\`, with \`error="invalid_token"\` when a bearer token was given and refused.`, schema: { type: 'string' } },
    };
  }
  const upgrade = operation.responses['426'];
  if (upgrade) upgrade.headers = { Upgrade: { description: 'The protocol to upgrade to: `websocket`.', schema: { type: 'string', const: 'websocket' } } };
  const retryAfter = { description: 'Whole seconds to wait before trying again.', schema: { type: 'string', pattern: '^[0-9]+$' } };
  const tooMany = operation.responses['429'];
  if (tooMany) tooMany.headers = { 'Retry-After': retryAfter };
  const unavailable = operation.responses['503'];
  if (unavailable && path.startsWith('/v1/')) unavailable.headers = { 'Retry-After': { ...retryAfter, description: `${retryAfter.description} Sent when the answer knows (too many logins waiting).` } };
}

/**
 * fastify's wildcard (`/v1/webhooks/*`) comes out as a path parameter named `*`; it is named
 * `subpath` instead, which generators can turn into an identifier.
 */
function renameWildcards(doc: OpenApiDocument): void {
  for (const path of Object.keys(doc.paths)) {
    if (!path.endsWith('/{*}')) continue;
    const item = doc.paths[path]!;
    for (const operation of Object.values(item)) {
      for (const parameter of (operation.parameters ?? []) as { name: string; description?: string }[]) {
        if (parameter.name !== '*') continue;
        parameter.name = 'subpath';
        parameter.description = 'Any path below (it may hold slashes).';
      }
    }
    delete doc.paths[path];
    doc.paths[`${path.slice(0, -'{*}'.length)}{subpath}`] = item;
  }
}

/**
 * Replaces `schema`, and every titled schema inside it, with a reference to its component. Two
 * schemas with one title must be the same schema (descriptions aside): a mistake otherwise.
 */
function hoist(schema: JsonSchema, schemas: Record<string, JsonSchema>): JsonSchema {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return schema;
  const inner: JsonSchema = {};
  for (const [key, value] of Object.entries(schema)) inner[key] = descend(key, value, schemas);
  const title = inner.title;
  if (typeof title !== 'string') return inner;
  const { description, ...body } = inner;
  const component = { ...body, ...(description === undefined ? {} : { description }) };
  const known = (schemas[title] ??= component);
  if (!isDeepStrictEqual(withoutDescription(known), withoutDescription(component))) {
    throw new Error(`Two different schemas are titled ${title}: give one of them another title`);
  }
  // A description given where the schema is used stays there (OpenAPI 3.1 allows it beside $ref).
  const ref = { $ref: `#/components/schemas/${title}` };
  return description === undefined || description === known.description ? ref : { ...ref, description };
}

function descend(key: string, value: unknown, schemas: Record<string, JsonSchema>): unknown {
  if (value === null || typeof value !== 'object') return value;
  // Under these keys sit maps of names to schemas, not schemas.
  if (key === 'properties' || key === 'patternProperties' || key === '$defs' || key === 'dependentSchemas') {
    return Object.fromEntries(Object.entries(value as JsonSchema).map(([name, schema]) => [name, hoist(schema as JsonSchema, schemas)]));
  }
  if (Array.isArray(value)) return key === 'anyOf' || key === 'oneOf' || key === 'allOf' || key === 'prefixItems' ? value.map((item) => hoist(item as JsonSchema, schemas)) : value;
  if (['items', 'additionalProperties', 'not', 'if', 'then', 'else', 'contains', 'propertyNames'].includes(key)) return hoist(value as JsonSchema, schemas);
  return value;
}

function withoutDescription(schema: JsonSchema): JsonSchema {
  const { description: _description, ...rest } = schema;
  return rest;
}

/** `POST /sim/v1/stations/{token}/faults` → `postSimV1StationsTokenFaults`. */
function derivedId(method: string, path: string): string {
  const words = path.split(/[^A-Za-z0-9]+/).filter((word) => word !== '');
  return method + words.map((word) => word[0]!.toUpperCase() + word.slice(1)).join('');
}

/** One route schema may serve several methods (webhooks): each operation gets its own id. */
function uniqueId(id: string, method: string, used: Set<string>): string {
  const unique = used.has(id) ? `${id}${method[0]!.toUpperCase()}${method.slice(1)}` : id;
  used.add(unique);
  return unique;
}

/**
 * Routes that name no security are public on `/v1` (login, refresh, revoke, webhooks, this
 * document). The control plane asks for its token only when the simulator was started with one
 * (docs/control-plane.md): either requirement is met by nothing else when it was not.
 */
function securityOf(path: string): Record<string, string[]>[] {
  if (path.startsWith('/sim/v1/')) return [{ [CONTROL_SCHEME]: [] }, {}];
  return [];
}

/**
 * Answers that come from the server around the routes rather than from a handler: refused requests
 * (error-handling.ts, request-rules.ts), the connection limit (server-limits.ts), unread bodies, the
 * control token, and the API faults a test may inject on any `/v1` route.
 */
function addCommonResponses(path: string, method: string, operation: OpenApiOperation): void {
  const add = (status: string, description: string): void => {
    operation.responses[status] ??= { description, content: { 'application/json': { schema: ERROR_REF } } };
  };
  add('400', errorResponseDescription(400));
  if (BODY_METHODS.has(method) && !path.startsWith('/v1/webhooks')) {
    add('413', errorResponseDescription(413));
    add('415', errorResponseDescription(415));
  }
  if (path.startsWith('/sim/v1/')) add('401', errorResponseDescription(401, 'control'));
  add('429', errorResponseDescription(429, 'connections'));
  add('500', errorResponseDescription(500));
  if (path.startsWith('/v1/')) {
    add(
      'default',
      'Any other error, with the same `{ message }` body: 408 (the request did not arrive in time), 431 (headers too large), or any status from 400 to 599 that an API fault (`POST /sim/v1/api-faults`) injects.',
    );
  }
}
