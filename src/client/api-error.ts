/**
 * The errors of the reference client. `ApiError` is an answer of the API; the others are no answer
 * at all, each with a `code` a caller can switch on (docs/errors.md, "The reference client", lists
 * them; a test holds the two together).
 */

/** A non-2xx answer of the API: its HTTP status and the `message` of its body (interface section 7). */
export class ApiError extends Error {
  readonly status: number;

  constructor(status: number, message: string) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
  }
}

export function isApiError(error: unknown, status?: number): error is ApiError {
  return error instanceof ApiError && (status === undefined || error.status === status);
}

/** The codes of the client's errors that carry no status, each with its class's name. */
export const CLIENT_ERRORS = {
  API_UNREACHABLE: 'ApiUnreachableError',
  API_TIMEOUT: 'ApiTimeoutError',
  API_ABORTED: 'ApiAbortedError',
} as const;

export type ClientErrorCode = keyof typeof CLIENT_ERRORS;

/**
 * No answer came, so there is no status: the API could not be reached (connection refused, unknown
 * host, connect timeout) or the connection failed before the whole answer was in. Apart from
 * `ApiError` so that a caller can tell "the server said no" from "no server", and so that a status
 * always is one the server sent. The message names the request, the API's address (without
 * credentials) and why; `cause` is what fetch threw.
 */
export class ApiUnreachableError extends Error {
  readonly code: ClientErrorCode = 'API_UNREACHABLE';

  constructor(message: string, options: ErrorOptions) {
    super(message, options);
    this.name = 'ApiUnreachableError';
  }
}

/**
 * The call's `timeoutMs` (its own or the client's) ran out before the answer was in: the server
 * may still act on the request (an unlock may still open the lock), so read before sending again.
 */
export class ApiTimeoutError extends Error {
  readonly code: ClientErrorCode = 'API_TIMEOUT';
  /** The timeout that ran out, in milliseconds. */
  readonly timeoutMs: number;

  constructor(message: string, timeoutMs: number) {
    super(message);
    this.name = 'ApiTimeoutError';
    this.timeoutMs = timeoutMs;
  }
}

/** The caller's `AbortSignal` (the client's or the call's) aborted the call; `cause` is the signal's reason. */
export class ApiAbortedError extends Error {
  readonly code: ClientErrorCode = 'API_ABORTED';

  constructor(message: string, options: ErrorOptions) {
    super(message, options);
    this.name = 'ApiAbortedError';
  }
}
