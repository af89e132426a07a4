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
}

export interface LoadFigures {
  kind: LoadConfig['kind'];
  connections: number;
  /** Seconds the run actually took. */
  durationSeconds: number;
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
  /** autocannon's own figures (whole milliseconds) for comparison. */
  autocannonLatency: { p50: number; p99: number; mean: number };
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
  const options: AutocannonOptions = {
    url: config.url,
    connections: config.connections,
    timeout: config.timeoutSeconds ?? 10,
    requests: [request],
    verifyBody,
    ...(config.amount === undefined ? { duration: config.durationSeconds ?? 5 } : { amount: config.amount }),
    ...(config.overallRate === undefined ? {} : { overallRate: config.overallRate }),
  };
  const latencies: number[] = [];
  // Tells the harness to start counting CPU: the driver's own start-up is over.
  reportProgress('started');
  return new Promise((resolve, reject) => {
    const instance = autocannon(options, (error, result) => {
      if (error) {
        reject(error);
        return;
      }
      const statusCodes: Record<string, number> = {};
      for (const [code, stats] of Object.entries(result.statusCodeStats)) statusCodes[code] = stats.count;
      const ok = result['2xx'] - result.mismatches;
      resolve({
        kind: config.kind,
        connections: config.connections,
        durationSeconds: result.duration,
        sent: result.requests.sent,
        ok,
        rps: ok / result.duration,
        non2xx: result.non2xx,
        bodyFailures: result.mismatches,
        errors: result.errors,
        timeouts: result.timeouts,
        statusCodes,
        latency: summarizeLatencies(latencies),
        autocannonLatency: { p50: result.latency.p50, p99: result.latency.p99, mean: result.latency.mean },
      });
    });
    instance.on('response', (_client, statusCode, _bytes, responseTime) => {
      if (statusCode >= 200 && statusCode < 300) latencies.push(responseTime);
    });
  });
}

await serveParent(() => run(config));
