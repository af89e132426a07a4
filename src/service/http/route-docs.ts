/** Pieces shared by the route schemas: error responses and the bearer security requirement. */
import type { TSchema } from '@sinclair/typebox';
import { ErrorBodySchema } from './api-schemas.js';
import { ERRORS } from '../../errors.js';

/** Name of the OpenAPI security scheme of the bearer access token. */
export const BEARER_SCHEME = 'bearerAuth';

/** Name of the OpenAPI security scheme of the control plane's token (docs/control-plane.md). */
export const CONTROL_SCHEME = 'controlToken';

/**
 * Marks a route schema whose body may be left out (fastify cannot make a whole body optional in
 * the schema): openapi-document.ts makes its `requestBody.required` false.
 */
export const BODY_OPTIONAL = 'x-body-optional';

/** `security` of a route that needs `Authorization: Bearer <accessToken>` (interface section 5.3). */
export const BEARER_SECURITY = [{ [BEARER_SCHEME]: [] }];

const DESCRIPTIONS: Record<number, string> = {
  400: 'Bad request: the message names the field at fault.',
  401: `"${ERRORS.TOKEN_INVALID.message}" or "${ERRORS.INVALID_CREDENTIALS.message}".`,
  404: 'Not found.',
  413: ERRORS.PAYLOAD_TOO_LARGE.message,
  415: ERRORS.UNSUPPORTED_MEDIA_TYPE.message,
  426: `"${ERRORS.UPGRADE_REQUIRED.message}": a plain GET of a WebSocket route, with no upgrade (\`Upgrade: websocket\` is sent back).`,
  429: `"${ERRORS.LOGIN_THROTTLED.message}": too many failed logins from the client address or for the email. \`Retry-After\` says how many seconds to wait.`,
  409: 'Conflict: the request does not fit the current state.',
  500: `"${ERRORS.INTERNAL.message}": an unexpected failure; the log has its cause.`,
  501: 'Not available.',
  504: 'The unlock\'s outcome is unknown: the station did not acknowledge the command in time (or the service stopped while it waited), and it may still carry it out until the command expires. Read the station before sending the command again.',
  503: `"${ERRORS.SESSION_STORE_UNAVAILABLE.message}": the API runs with a Redis session store (\`--state\`) that cannot be reached; on login also "${ERRORS.LOGIN_BUSY.message}": too many logins wait for a password check, \`Retry-After\` says how many seconds to wait.`,
};

/** Descriptions of the answers the server gives around the routes (openapi-document.ts). */
const AROUND_ROUTES = {
  control: `"${ERRORS.CONTROL_TOKEN_INVALID.message}": the simulator was started with a control token and the request did not carry it as \`Authorization: Bearer <token>\`.`,
  connections: `"${ERRORS.TOO_MANY_CONNECTIONS.message}": the client address holds more connections than the server allows (\`Retry-After\`).`,
} as const;

/** What an error status means, for the OpenAPI document. */
export function errorResponseDescription(status: number, around?: keyof typeof AROUND_ROUTES): string {
  return around ? AROUND_ROUTES[around] : (DESCRIPTIONS[status] ?? 'Error.');
}

/**
 * A response schema whose answer has its own description in the document, while the schema stays
 * the named component (`@fastify/swagger` reads `x-response-description` and removes it).
 */
export function described<T extends TSchema>(schema: T, description: string): T {
  return { ...schema, [RESPONSE_DESCRIPTION]: description };
}
const RESPONSE_DESCRIPTION = 'x-response-description';

/**
 * Error responses for the given status codes, each with the `{ message }` body of interface
 * section 7 (the `Error` component) and what the status means.
 */
export function errorResponses(...statuses: number[]): Record<number, typeof ErrorBodySchema> {
  const responses: Record<number, typeof ErrorBodySchema> = {};
  for (const status of statuses) responses[status] = described(ErrorBodySchema, errorResponseDescription(status));
  return responses;
}
