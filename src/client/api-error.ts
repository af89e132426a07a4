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

/**
 * No answer came, so there is no status: the API could not be reached (connection refused, unknown
 * host, connect timeout) or the connection failed before the whole answer was in. Apart from
 * `ApiError` so that a caller can tell "the server said no" from "no server", and so that a status
 * always is one the server sent. The message names the request, the API's address (without
 * credentials) and why; `cause` is what fetch threw.
 */
export class ApiUnreachableError extends Error {
  constructor(message: string, options: ErrorOptions) {
    super(message, options);
    this.name = 'ApiUnreachableError';
  }
}
