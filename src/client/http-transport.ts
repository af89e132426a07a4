/**
 * The client's one way onto the wire: JSON in, JSON out, non-2xx thrown as `ApiError`. Tokens
 * travel only in the Authorization header or the JSON body, never in a URL (interface section 5.9).
 */
import { ApiError } from './api-error.js';

export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

export interface JsonRequest {
  method: 'GET' | 'POST';
  /** Path under the base address, already encoded, e.g. `/v1/stations/ST-1`. */
  path: string;
  accessToken?: string;
  body?: unknown;
}

export class HttpTransport {
  readonly #baseUrl: string;
  readonly #fetch: FetchLike;

  constructor(baseUrl: string, fetchImpl: FetchLike) {
    this.#baseUrl = baseUrl.replace(/\/+$/, '');
    this.#fetch = fetchImpl;
  }

  /** The parsed JSON body of a 2xx answer; throws `ApiError` for any other status. */
  async send<T>(request: JsonRequest): Promise<T> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (request.accessToken !== undefined) headers.authorization = `Bearer ${request.accessToken}`;
    if (request.body !== undefined) headers['content-type'] = 'application/json';
    const response = await this.#fetch(`${this.#baseUrl}${request.path}`, {
      method: request.method,
      headers,
      ...(request.body === undefined ? {} : { body: JSON.stringify(request.body) }),
    });
    const text = await response.text();
    const body = parseJson(text);
    if (!response.ok) {
      const message = typeof body === 'object' && body !== null && typeof (body as { message?: unknown }).message === 'string'
        ? (body as { message: string }).message
        : `HTTP ${response.status}`;
      throw new ApiError(response.status, message);
    }
    return body as T;
  }
}

function parseJson(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
