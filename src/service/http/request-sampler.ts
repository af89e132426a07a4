/**
 * Sampling of per-request log lines under load: at most `maxRequestsPerSecond` requests a second
 * get their lines ("incoming request", "request completed", a 404's "Route … not found" and the
 * routes' own lines such as "unlock"); the lines of the requests over that budget are dropped, and
 * one line a second says how many requests were left out:
 * `{"msg":"request lines sampled","logged":100,"dropped":1234}`.
 *
 * Never dropped: lines at warn or above (a request that failed, a stream error), the
 * "request completed" line of a 5xx answer (a server fault is what a log is read for, and under
 * normal load there are none), and everything that is not about one request (start-up, the MQTT
 * gateway). 4xx answers count against the budget like any other: a client hammering with a bad
 * token is exactly the flood the budget is for.
 *
 * The decision is made once per request, when it comes in, so a request has either all its lines
 * or none, and dropped lines are never serialized. On the hot path it costs a counter check and a
 * boolean on the request (declared with `decorateRequest`, so it allocates nothing).
 */
import { LogController, type FastifyBaseLogger, type FastifyReply, type FastifyRequest } from 'fastify';

declare module 'fastify' {
  interface FastifyRequest {
    /** True when the request's log lines are left out by sampling (request-sampler.ts). */
    logSampledOut: boolean;
  }
}

/** The budget's window; the summary line is written once per window with drops. */
const WINDOW_MS = 1000;

export class RequestSampler extends LogController {
  readonly #budget: number;
  #logged = 0;
  #dropped = 0;
  #log: FastifyBaseLogger | undefined;
  #timer: ReturnType<typeof setInterval> | undefined;

  /** @param maxRequestsPerSecond requests whose lines are logged each second; 0 logs every request. */
  constructor(maxRequestsPerSecond: number) {
    super();
    this.#budget = maxRequestsPerSecond === 0 ? Number.POSITIVE_INFINITY : maxRequestsPerSecond;
  }

  /** Starts the one-second windows; the summaries go to `log` (the app's logger, not a request's). */
  start(log: FastifyBaseLogger): void {
    this.#log = log;
    if (this.#budget === Number.POSITIVE_INFINITY) return;
    // unref'd: a log summary must never keep the process alive.
    this.#timer = setInterval(() => this.#endWindow(), WINDOW_MS);
    this.#timer.unref();
  }

  /** Writes the summary of the window in progress, if it dropped anything, and stops the windows. */
  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
    this.#endWindow();
  }

  #endWindow(): void {
    if (this.#dropped > 0) this.#log?.info({ logged: this.#logged, dropped: this.#dropped }, 'request lines sampled');
    this.#logged = 0;
    this.#dropped = 0;
  }

  override incomingRequest(request: FastifyRequest, reply: FastifyReply): void {
    if (this.#logged < this.#budget) {
      this.#logged += 1;
      super.incomingRequest(request, reply);
    } else {
      this.#dropped += 1;
      request.logSampledOut = true;
    }
  }

  override isLogDisabled(request: FastifyRequest): boolean {
    return request.logSampledOut;
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    // A failure (logged at error) or a 5xx is always logged, sampled out or not.
    if (error || reply.statusCode >= 500) request.logSampledOut = false;
    super.requestCompleted(error, request, reply);
  }

  override defaultErrorLog(error: Error, request: FastifyRequest, reply: FastifyReply): void {
    // fastify logs a 5xx here at error level, a 4xx at info.
    if (reply.statusCode >= 500) request.logSampledOut = false;
    super.defaultErrorLog(error, request, reply);
  }

  override streamError(error: Error, request: FastifyRequest, reply: FastifyReply): void {
    // A premature close is logged at info; any other stream error at warn.
    if ((error as NodeJS.ErrnoException).code !== 'ERR_STREAM_PREMATURE_CLOSE') request.logSampledOut = false;
    super.streamError(error, request, reply);
  }

  override writeHeadError(error: Error, request: FastifyRequest, reply: FastifyReply): void {
    request.logSampledOut = false; // logged at warn
    super.writeHeadError(error, request, reply);
  }

  override serializerError(error: Error, request: FastifyRequest, reply: FastifyReply, metadata: { statusCode: number }): void {
    request.logSampledOut = false; // logged at error
    super.serializerError(error, request, reply, metadata);
  }
}
