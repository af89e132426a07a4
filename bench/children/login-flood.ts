/**
 * Benchmark child: a flood of wrong logins, as the issue saw it (522 wrong guesses at 43/s from one
 * client), sent beside the soak's unlock load. Each request is `POST /v1/auth/login` with a made-up
 * email and a wrong password (nothing secret), from one of `addresses` loopback source addresses
 * (127.0.0.2, 127.0.0.3, …: Linux routes all of 127/8 to the loopback interface), so the API sees
 * that many clients and 127.0.0.1 stays free for the harness's own real logins. Ready data is a
 * `FloodFigures`.
 *
 * Bounded in count and time: at most `rate × seconds` requests, at most `maxInFlight` at once (an
 * attempt past that is counted as skipped, not queued), each given up after 10 s, and the answers
 * still out when the sending ends are waited for at most 15 s.
 *
 *   login-flood.ts --config '{"url":"http://127.0.0.1:P","rate":43,"seconds":20,"addresses":1}'
 */
import http from 'node:http';
import { parseArgs } from 'node:util';
import { reportProgress, serveParent } from '../lib/ipc.js';
import { summarizeLatencies, type LatencySummary } from '../lib/stats.js';

export interface FloodConfig {
  url: string;
  /** Login attempts per second over all addresses. */
  rate: number;
  seconds: number;
  /** Source addresses 127.0.0.2 … 127.0.0.(addresses + 1), used in turn. At most 250. */
  addresses: number;
  /** @default 256 */
  maxInFlight?: number;
}

export interface FloodFigures {
  sent: number;
  skipped: number;
  /** Answers by status; `error` for a failed or timed-out request. */
  statuses: Record<string, number>;
  /** Answer times of every answer, ms. */
  latency: LatencySummary;
  /** Answer times of the 401s, i.e. of the attempts that got a password check, ms. */
  checkedLatency: LatencySummary;
  seconds: number;
}

const REQUEST_TIMEOUT_MS = 10_000;
const DRAIN_LIMIT_MS = 15_000;
const TICK_MS = 10;

const { values } = parseArgs({ options: { config: { type: 'string' } } });
const config = JSON.parse(values.config ?? '{}') as FloodConfig;

function flood(config: FloodConfig): Promise<FloodFigures> {
  const target = new URL('/v1/auth/login', config.url);
  const count = Math.max(1, Math.min(250, Math.floor(config.addresses)));
  const agents = Array.from({ length: count }, () => new http.Agent({ keepAlive: true, maxSockets: 64 }));
  const maxInFlight = config.maxInFlight ?? 256;
  const total = Math.floor(config.rate * config.seconds);
  const statuses: Record<string, number> = {};
  const latencies: number[] = [];
  const checked: number[] = [];
  let sent = 0;
  let skipped = 0;
  let inFlight = 0;

  const attempt = (index: number): void => {
    if (inFlight >= maxInFlight) {
      skipped += 1;
      return;
    }
    inFlight += 1;
    const body = JSON.stringify({ email: `flood-${index}@example.com`, password: 'wrong-guess' });
    const startedAt = performance.now();
    const done = (status: string): void => {
      inFlight -= 1;
      statuses[status] = (statuses[status] ?? 0) + 1;
      const ms = performance.now() - startedAt;
      latencies.push(ms);
      if (status === '401') checked.push(ms);
    };
    const request = http.request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: 'POST',
        localAddress: `127.0.0.${2 + (index % count)}`,
        agent: agents[index % count],
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        timeout: REQUEST_TIMEOUT_MS,
      },
      (response) => {
        response.resume();
        response.on('end', () => done(String(response.statusCode)));
      },
    );
    request.on('timeout', () => request.destroy(new Error('timed out')));
    request.on('error', () => done('error'));
    request.end(body);
  };

  return new Promise((resolve) => {
    const startedAt = performance.now();
    reportProgress('started');
    const ticker = setInterval(() => {
      const due = Math.min(total, Math.floor(((performance.now() - startedAt) / 1000) * config.rate));
      while (sent < due) attempt(sent++);
      if (sent < total) return;
      clearInterval(ticker);
      const sendingEnded = performance.now();
      const drain = setInterval(() => {
        if (inFlight > 0 && performance.now() - sendingEnded < DRAIN_LIMIT_MS) return;
        clearInterval(drain);
        for (const agent of agents) agent.destroy();
        resolve({
          sent,
          skipped,
          statuses,
          latency: summarizeLatencies(latencies),
          checkedLatency: summarizeLatencies(checked),
          seconds: (performance.now() - startedAt) / 1000,
        });
      }, TICK_MS);
    }, TICK_MS);
  });
}

await serveParent(() => flood(config));
