/**
 * The client's one way onto the wire: JSON in, JSON out, non-2xx thrown as `ApiError`, no answer
 * at all as `ApiUnreachableError`. Tokens travel only in the Authorization header or the JSON body,
 * never in a URL (interface section 5.9), so no message built from a URL or a socket error holds one.
 */
import { ApiError, ApiUnreachableError } from './api-error.js';
import type { CallDeadline } from './call-deadline.js';
import { redactUrl, redactUrlsIn } from '../shared/redact-url.js';

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
    let url: URL;
    try {
      url = new URL(baseUrl);
    } catch {
      throw new TypeError(`baseUrl must be an absolute http:// or https:// address, not ${JSON.stringify(redactUrl(String(baseUrl)))}`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new TypeError(`baseUrl must be an http:// or https:// address, not ${url.protocol}//`);
    }
    // fetch refuses a URL holding credentials and quotes it whole in its error (and so in any
    // `cause`); the API takes a bearer token from login, so refuse it here, without the secret.
    if (url.username !== '' || url.password !== '') {
      throw new TypeError(`baseUrl ${redactUrl(baseUrl)} holds credentials (user:password@): the API takes the email and password options and a bearer token, never credentials in the address`);
    }
    this.#baseUrl = baseUrl.replace(/\/+$/, '');
    this.#fetch = fetchImpl;
  }

  /** The address, without credentials, as error messages show it. */
  get shownUrl(): string {
    return redactUrl(this.#baseUrl);
  }

  /**
   * The parsed JSON body of a 2xx answer; throws `ApiError` for any other status,
   * `ApiUnreachableError` for no answer, and the deadline's error once the call gives up.
   */
  async send<T>(request: JsonRequest, deadline?: CallDeadline): Promise<T> {
    deadline?.throwIfGivenUp();
    const headers: Record<string, string> = { accept: 'application/json' };
    if (request.accessToken !== undefined) headers.authorization = `Bearer ${request.accessToken}`;
    if (request.body !== undefined) headers['content-type'] = 'application/json';
    let response: Response;
    let text: string;
    try {
      const sent = this.#fetch(`${this.#baseUrl}${request.path}`, {
        method: request.method,
        headers,
        ...(request.body === undefined ? {} : { body: JSON.stringify(request.body) }),
        ...(deadline === undefined ? {} : { signal: deadline.signal }),
      });
      // Raced as well: a `fetch` option that ignores `signal` must not hold the call past its deadline.
      response = await (deadline?.race(sent) ?? sent);
    } catch (error) {
      deadline?.throwIfGivenUp();
      throw this.#unreachable(request, (api) => `the API at ${api} cannot be reached`, error);
    }
    try {
      const read = response.text();
      text = await (deadline?.race(read) ?? read);
    } catch (error) {
      deadline?.throwIfGivenUp();
      throw this.#unreachable(request, (api) => `the connection to the API at ${api} failed before the whole answer was in`, error);
    }
    const body = parseJson(text);
    if (!response.ok) {
      const message = typeof body === 'object' && body !== null && typeof (body as { message?: unknown }).message === 'string'
        ? (body as { message: string }).message
        : `HTTP ${response.status}`;
      throw new ApiError(response.status, message);
    }
    return body as T;
  }

  /** fetch rejects with a bare `TypeError: fetch failed`; this says which request, where, and why. */
  #unreachable(request: JsonRequest, problem: (api: string) => string, error: unknown): ApiUnreachableError {
    const message = `${request.method} ${request.path}: ${problem(redactUrl(this.#baseUrl))} (${reasonOf(error)})`;
    return new ApiUnreachableError(message, { cause: error });
  }
}

/**
 * Why a request got no answer, from what fetch threw: undici wraps the socket's error ("connect
 * ECONNREFUSED 127.0.0.1:8080", "getaddrinfo ENOTFOUND api.example") in a TypeError "fetch
 * failed", and a connection tried on several addresses fails with an AggregateError of them all.
 * URLs in it are shown without credentials (fetch quotes a URL that holds a password whole).
 */
function reasonOf(error: unknown): string {
  const parts: string[] = [];
  for (let current = error, depth = 0; current !== undefined && depth < 5; depth += 1) {
    if (!(current instanceof Error)) {
      parts.push(String(current));
      break;
    }
    const inner = current instanceof AggregateError ? current.errors.filter((each): each is Error => each instanceof Error) : [];
    const own = current.message !== '' ? current.message : inner.map((each) => each.message).join(', ') || current.name;
    // "fetch failed" says nothing the message around it does not; its cause says why.
    if (own !== 'fetch failed' || current.cause === undefined) parts.push(own);
    current = current.cause;
  }
  return redactUrlsIn(parts.join(': '));
}

function parseJson(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
