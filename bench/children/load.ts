/**
 * Benchmark child: the HTTP load driver, autocannon in its own process so its CPU does not count
 * against the server's. Ready data is a `LoadFigures`.
 *
 * `unlock` POSTs `/v1/stations/{token}/locks/{lockId}/unlock` with the bearer token from the
 * environment variable `BENCH_TOKEN` (never argv, which `ps` shows), rotating over every lock of the
 * bench fleet so that no lock gets a second command while the first is in flight. `hello` GETs `/`.
 * Both go through the same `setupRequest` hook and body check, so the driver does the same work
 * per request for the product and for its hello-world baseline.
 *
 *   load.ts --config '{"url":"http://127.0.0.1:P","kind":"unlock","connections":10,"durationSeconds":5,"stations":1000,"locks":4}'
 */
import { parseArgs } from 'node:util';
import autocannon, { type AutocannonOptions, type AutocannonRequest } from 'autocannon';
import { unlockPath, unlockTargets } from '../lib/fixtures.js';
import { reportProgress, serveParent } from '../lib/ipc.js';
import { summarizeLatencies, type LatencySummary } from '../lib/stats.js';

export interface LoadConfig {
  /** Base URL of the server. */
  url: string;
  kind: 'unlock' | 'hello';
  connections: number;
  /** Length of the run; ignored when `amount` is set. */
  durationSeconds?: number;
  /** Send exactly this many requests and wait for every answer (the soak uses this to count losses). */
  amount?: number;
  /** Requests per second over all connections; unlimited when unset. */
  overallRate?: number;
  /** Seconds before a request counts as timed out. @default 10 */
  timeoutSeconds?: number;
  /** Size of the unlock fleet, for the rotation of targets. */
  stations?: number;
  locks?: number;
  /** Where the rotation starts, so consecutive runs against one server do not begin on the same locks. @default 0 */
  offset?: number;
  /**
   * Seconds of the same load, on the same connections, before the measured part begins. The
   * connections all open at once and their first requests arrive together; for about half a
   * second they stay in step and the server works in waves (bench/README.md, "Ramp"). Answers
   * during the ramp are kept apart (`ramp`) and left out of every other figure, CPU included.
   * @default 0
   */
  rampSeconds?: number;
}

export interface LoadFigures {
  kind: LoadConfig['kind'];
  connections: number;
  /** Seconds the measured part actually took (the ramp not included). */
  durationSeconds: number;
  /** Requests sent over the whole load, ramp included (autocannon's count). */
  sent: number;
  /** 2xx answers whose body said success. */
  ok: number;
  /** Successful answers per second. */
  rps: number;
  /** Answers that were not 2xx. */
  non2xx: number;
  /** 2xx answers whose body was not success (`{"success":false,…}` for an unlock). */
  bodyFailures: number;
  /** Connection errors and timeouts. */
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
  /** Exact latencies of the 2xx answers, ms. */
  latency: LatencySummary;
  /** autocannon's own figures (whole milliseconds, ramp included) for comparison. */
  autocannonLatency: { p50: number; p99: number; mean: number };
  /**
   * With `rampSeconds`: the 2xx answers of the ramp, and of the whole load from the first
   * connection on (ramp and measured part together), so what the ramp costs stays visible.
   */
  ramp?: { seconds: number; answers: number; latency: LatencySummary; fromStart: LatencySummary };
}

const { values } = parseArgs({ options: { config: { type: 'string' } } });
const config = JSON.parse(values.config ?? '{}') as LoadConfig;

function requestsFor(config: LoadConfig): { request: AutocannonRequest; verifyBody: (body: string) => boolean } {
  if (config.kind === 'hello') {
    return { request: { method: 'GET', setupRequest: (request) => ({ ...request, path: '/' }) }, verifyBody: (body) => body === '{"hello":"world"}' };
  }
  const token = process.env.BENCH_TOKEN;
  if (!token) throw new Error('BENCH_TOKEN is not set');
  const paths = unlockTargets(config.stations ?? 1, config.locks ?? 1).map(unlockPath);
  let next = config.offset ?? 0;
  return {
    request: {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      setupRequest: (request) => ({ ...request, path: paths[next++ % paths.length]! }),
    },
    verifyBody: (body) => body.includes('"success":true'),
  };
}

function run(config: LoadConfig): Promise<LoadFigures> {
  const { request, verifyBody } = requestsFor(config);
  const rampSeconds = config.rampSeconds ?? 0;
  const options: AutocannonOptions = {
    url: config.url,
    connections: config.connections,
    timeout: config.timeoutSeconds ?? 10,
    requests: [request],
    verifyBody,
    ...(config.amount === undefined ? { duration: rampSeconds + (config.durationSeconds ?? 5) } : { amount: config.amount }),
    ...(config.overallRate === undefined ? {} : { overallRate: config.overallRate }),
  };
  // Everything is counted here from the events rather than taken from autocannon's totals, which
  // cover the whole load, ramp included.
  const latencies: number[] = [];
  const rampLatencies: number[] = [];
  const statusCodes: Record<string, number> = {};
  let answers2xx = 0;
  let non2xx = 0;
  let mismatches = 0;
  let errors = 0;
  let timeouts = 0;
  let measuring = false;
  let measuredFrom = 0;
  const startMeasuring = (): void => {
    measuring = true;
    measuredFrom = performance.now();
    // Tells the harness to start counting CPU: the driver's start-up (and the ramp) is over.
    reportProgress('started');
  };
  if (rampSeconds === 0) startMeasuring();
  return new Promise((resolve, reject) => {
    const instance = autocannon(options, (error, result) => {
      clearTimeout(rampTimer);
      if (error) {
        reject(error);
        return;
      }
      const durationSeconds = measuring ? (performance.now() - measuredFrom) / 1000 : 0;
      const ok = answers2xx - mismatches;
      resolve({
        kind: config.kind,
        connections: config.connections,
        durationSeconds,
        sent: result.requests.sent,
        ok,
        rps: durationSeconds > 0 ? ok / durationSeconds : 0,
        non2xx,
        bodyFailures: mismatches,
        errors,
        timeouts,
        statusCodes,
        latency: summarizeLatencies(latencies),
        autocannonLatency: { p50: result.latency.p50, p99: result.latency.p99, mean: result.latency.mean },
        ...(rampSeconds > 0
          ? { ramp: { seconds: rampSeconds, answers: rampLatencies.length, latency: summarizeLatencies(rampLatencies), fromStart: summarizeLatencies([...rampLatencies, ...latencies]) } }
          : {}),
      });
    });
    const rampTimer = rampSeconds > 0 ? setTimeout(startMeasuring, rampSeconds * 1000) : undefined;
    instance.on('response', (_client, statusCode, _bytes, responseTime) => {
      const ok = statusCode >= 200 && statusCode < 300;
      if (!measuring) {
        if (ok) rampLatencies.push(responseTime);
        return;
      }
      statusCodes[statusCode] = (statusCodes[statusCode] ?? 0) + 1;
      if (ok) {
        answers2xx += 1;
        latencies.push(responseTime);
      } else non2xx += 1;
    });
    instance.on('reqMismatch', () => {
      if (measuring) mismatches += 1;
    });
    instance.on('reqError', (error: Error) => {
      if (!measuring) return;
      errors += 1;
      if (error.message === 'request timed out') timeouts += 1;
    });
  });
}

await serveParent(() => run(config));
