/**
 * The one catalogue of errors (STYLE.md): each code has an HTTP status and a default message.
 * `docs/errors.md` documents every code, and `test/errors.test.ts` checks that it does.
 * Messages never carry tokens or passwords.
 */
export const ERRORS = {
  // Start-up and tooling
  FIXTURE_INVALID: { status: 400, message: 'The fixture is invalid' },
  BROKER_UNREACHABLE: { status: 503, message: 'The MQTT broker cannot be reached' },
  BROKER_REFUSED: { status: 503, message: 'The MQTT broker refused the connection' },
  BROKER_CERTIFICATE: { status: 503, message: 'The MQTT broker has a certificate this machine does not accept' },
  MQTT_CREDENTIALS: { status: 500, message: 'An MQTT password or certificate cannot be read' },
  PORT_IN_USE: { status: 500, message: 'The port is already in use' },
  HOST_UNAVAILABLE: { status: 500, message: 'The host to listen on does not resolve or is not an address of this machine' },
  LISTEN_FAILED: { status: 500, message: 'Cannot listen on the host and port given' },
  JWT_SECRET_TOO_SHORT: { status: 500, message: 'The JWT secret (STATION_SIM_JWT_SECRET) must be at least 32 bytes' },
  CERTS_DIR_UNWRITABLE: { status: 500, message: 'Cannot write the certificates folder' },
  CERTS_CA_MISMATCH: { status: 500, message: 'The CA key does not match the CA certificate' },
  CERTS_UNKNOWN_STATION: { status: 404, message: 'The certificates folder has no certificate for that station' },
  JWT_SECRET_REQUIRED: { status: 500, message: 'A shared session store needs STATION_SIM_JWT_SECRET: without it each API process signs access tokens with a key of its own' },
  JWT_SECRET_WEAK: { status: 500, message: 'The JWT secret (STATION_SIM_JWT_SECRET) is too predictable: use 32 random bytes, e.g. `openssl rand -base64 32`' },
  // `/v1` API (interface section 7, and docs/design.md for the gaps)
  INVALID_CREDENTIALS: { status: 401, message: 'Invalid credentials' },
  LOGIN_THROTTLED: { status: 429, message: 'Too many failed logins; try again later' },
  LOGIN_BUSY: { status: 503, message: 'Too many logins at once; try again shortly' },
  TOKEN_INVALID: { status: 401, message: 'Token is invalid' },
  STATION_NOT_FOUND: { status: 404, message: 'Station not found' },
  LOCK_NOT_FOUND: { status: 404, message: 'Lock not found' },
  UNLOCK_OUTCOME_UNKNOWN: { status: 504, message: 'The station did not acknowledge the command in time; it may still carry it out until the command expires' },
  BAD_REQUEST: { status: 400, message: 'Bad request' },
  ROUTE_NOT_FOUND: { status: 404, message: 'Route not found' },
  PAYLOAD_TOO_LARGE: { status: 413, message: 'Request body is too large' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, message: 'Request body must be application/json' },
  NOT_IMPLEMENTED: { status: 501, message: 'Webhooks are not available' },
  REQUEST_TIMEOUT: { status: 408, message: 'Request timeout' },
  HEADERS_TOO_LARGE: { status: 431, message: 'Request headers are too large' },
  TOO_MANY_CONNECTIONS: { status: 429, message: 'Too many connections from this address' },
  METHOD_NOT_ALLOWED: { status: 405, message: 'CONNECT is not supported: this server is not a proxy' },
  EXPECTATION_FAILED: { status: 417, message: 'Only "Expect: 100-continue" is supported' },
  UPGRADE_REQUIRED: { status: 426, message: 'This route is a WebSocket: send an upgrade request' },
  SESSION_STORE_UNAVAILABLE: { status: 503, message: 'The session store cannot be reached; try again shortly' },
  // `/sim/v1` control plane (docs/control-plane.md)
  CONTROL_TOKEN_INVALID: { status: 401, message: 'Control token is invalid' },
  FAULT_NOT_FOUND: { status: 404, message: 'Fault not found' },
  STATION_NO_RESPONSE: { status: 504, message: 'Station did not respond' },
  BROKER_DISCONNECTED: { status: 503, message: 'The control plane is not connected to the MQTT broker; try again once it is back' },
  CLOCK_NOT_MANUAL: { status: 409, message: 'The clock is not manual: start with --clock manual to advance it' },
  INTERNAL: { status: 500, message: 'Internal server error' },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof ERRORS;

/** An error of the catalogue. Translate other errors into these at boundaries only. */
export class SimError extends Error {
  readonly code: ErrorCode;
  readonly statusCode: number;

  constructor(code: ErrorCode, message: string = ERRORS[code].message, options?: ErrorOptions) {
    super(message, options);
    this.name = 'SimError';
    this.code = code;
    this.statusCode = ERRORS[code].status;
  }
}

/**
 * An error whose answer says when to try again (`Retry-After`, RFC 9110 section 10.2.3): a
 * throttled or shed login.
 */
export class RetryLaterError extends SimError {
  /** Whole seconds, at least 1. */
  readonly retryAfterSeconds: number;

  constructor(code: ErrorCode, retryAfterSeconds: number) {
    super(code);
    this.name = 'RetryLaterError';
    this.retryAfterSeconds = retryAfterSeconds;
  }
}
