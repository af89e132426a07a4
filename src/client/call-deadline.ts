/**
 * When a call of the reference client gives up: after its timeout, or when an AbortSignal (the
 * client's or the call's) aborts. A server that never answers (the control plane's `hang` API
 * fault, a stuck proxy) would otherwise hold a caller for good. The deadline covers the whole call,
 * the login or refresh it waits for included; the fetch it sends is aborted with it.
 */
import { ApiAbortedError, ApiTimeoutError } from './api-error.js';

/** Options of one call of the client: each overrides or adds to the client's own. */
export interface CallOptions {
  /**
   * Gives up on the call when this signal aborts: the call rejects with `ApiAbortedError`, whose
   * `cause` is the signal's reason. Adds to the client's `signal` (either one aborts the call).
   * @default none
   */
  signal?: AbortSignal;
  /**
   * Gives up on the call after this many milliseconds without its answer: the call rejects with
   * `ApiTimeoutError`. `0` or `Infinity` waits for good.
   * @default the client's `timeoutMs`
   */
  timeoutMs?: number;
}

export interface DeadlineSettings {
  /** What the call is, for the error's message, e.g. `GET /v1/stations/ST-1`. */
  what: string;
  /** The API's address, without credentials, for the error's message. */
  api: string;
  signals: (AbortSignal | undefined)[];
  timeoutMs: number | undefined;
}

/** A call's deadline: `signal` aborts, with the error to throw as its reason, when the call gives up. */
export class CallDeadline {
  readonly #controller = new AbortController();
  readonly #cleanups: (() => void)[] = [];

  constructor(settings: DeadlineSettings) {
    const { what, api, timeoutMs } = settings;
    for (const signal of settings.signals) {
      if (signal === undefined) continue;
      const onAbort = (): void => this.#giveUp(new ApiAbortedError(`${what}: aborted by the caller's signal before the API at ${api} answered`, { cause: signal.reason }));
      if (signal.aborted) {
        onAbort();
        break;
      }
      signal.addEventListener('abort', onAbort, { once: true });
      this.#cleanups.push(() => signal.removeEventListener('abort', onAbort));
    }
    if (timeoutMs !== undefined && timeoutMs > 0 && Number.isFinite(timeoutMs) && !this.signal.aborted) {
      const timer = setTimeout(() => this.#giveUp(new ApiTimeoutError(`${what}: no answer from the API at ${api} within ${timeoutMs} ms`, timeoutMs)), timeoutMs);
      this.#cleanups.push(() => clearTimeout(timer));
    }
  }

  /** Aborts once the call gives up; its `reason` is the `ApiTimeoutError` or `ApiAbortedError` to throw. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** Throws the reason the call gave up, if it did. */
  throwIfGivenUp(): void {
    if (this.signal.aborted) throw this.signal.reason as Error;
  }

  /**
   * `promise`'s outcome, or the deadline's error once the call gives up first. For waits that
   * cannot be aborted themselves (a renewal other calls share; a `fetch` option that ignores
   * `signal`), which then go on unobserved.
   */
  race<T>(promise: Promise<T>): Promise<T> {
    if (this.signal.aborted) {
      promise.catch(() => undefined);
      return Promise.reject(this.signal.reason as Error);
    }
    return new Promise<T>((resolve, reject) => {
      const onAbort = (): void => reject(this.signal.reason as Error);
      this.signal.addEventListener('abort', onAbort, { once: true });
      promise.then(
        (value) => {
          this.signal.removeEventListener('abort', onAbort);
          resolve(value);
        },
        (error: unknown) => {
          this.signal.removeEventListener('abort', onAbort);
          reject(error);
        },
      );
    });
  }

  /** Stops the timer and the listeners on the callers' signals; call once the call is over. */
  dispose(): void {
    for (const cleanup of this.#cleanups.splice(0)) cleanup();
  }

  #giveUp(error: Error): void {
    if (this.signal.aborted) return;
    this.#controller.abort(error);
    this.dispose();
  }
}

/** Runs `body` under a fresh deadline and disposes of it however `body` ends. */
export async function withDeadline<T>(settings: DeadlineSettings, body: (deadline: CallDeadline) => Promise<T>): Promise<T> {
  const deadline = new CallDeadline(settings);
  try {
    deadline.throwIfGivenUp();
    return await body(deadline);
  } finally {
    deadline.dispose();
  }
}
