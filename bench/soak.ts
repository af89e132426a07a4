/**
 * Part 4: the soak. The whole simulator in one process (embedded broker) under a moderate, steady
 * unlock load for minutes: memory at the start and the end, and a count of every request, so that a
 * lost or failed one shows. The driver sends a fixed number of requests at a fixed rate and waits for
 * every answer; the embedded broker counts the unlock commands and acks that pass through it.
 *
 * Then the same unlock load again beside a flood of wrong logins (issue 15: 43 wrong guesses a second
 * from one client), once from one address and once from many, each time with the unlock p99 and its
 * ratio to the p99 of the quiet soak, and a few real logins timed in the middle of the flood.
 */
import { startChild } from './lib/child.js';
import { BENCH_ACCOUNT } from './lib/fixtures.js';
import { login, runLoad, startUnlockServers, type LoadRun, type UnlockServers } from './lib/servers.js';
import type { ServerStats } from './lib/server-stats.js';
import { mib, round, summarizeLatencies, type LatencySummary } from './lib/stats.js';
import type { FloodConfig, FloodFigures } from './children/login-flood.js';

export interface SoakOptions {
  /** Length of the load. */
  seconds: number;
  /** Requests per second over all connections. */
  rate: number;
  /** @default 10 */
  connections?: number;
  /** @default 1000 */
  stations?: number;
  /** @default 4 */
  locks?: number;
  /** Seconds between memory samples. @default 10 */
  sampleEverySeconds?: number;
  /** Seconds of unlock load beside each login flood; 0 leaves the floods out. @default 60 */
  floodSeconds?: number;
  /** Wrong logins per second of each flood. @default 43 (the flood) */
  floodRate?: number;
  /** Source addresses of the flood phases: one per phase. @default [1, 64] */
  floodAddresses?: number[];
  log: (line: string) => void;
  verbose?: boolean;
}

/** The unlock load again, beside a flood of wrong logins. */
export interface FloodPhase {
  /** Source addresses the flood came from (127.0.0.2 onwards). */
  addresses: number;
  floodRate: number;
  seconds: number;
  /** The flood's answers by status (401 checked, 429 throttled, 503 shed) and their times. */
  flood: FloodFigures;
  unlock: { requests: number; ok: number; latency: LoadRun['latency'] };
  /** Unlock p99 beside the flood ÷ unlock p99 of the quiet soak. */
  p99Ratio: number;
  /** Real logins of the bench account from 127.0.0.1 during the flood: statuses and times. */
  realLogins: { statuses: Record<string, number>; latency: LatencySummary };
  cpu: Record<string, number>;
}

export interface SoakResult {
  seconds: number;
  rate: number;
  connections: number;
  requests: number;
  /** 200 `{"success":true}` answers. */
  ok: number;
  /** Requests without a successful answer: requests − ok. */
  lost: number;
  non2xx: number;
  bodyFailures: number;
  errors: number;
  timeouts: number;
  /** Unlock commands the API published and acks the stations sent, counted at the broker. */
  commandsAtBroker: number;
  acksAtBroker: number;
  pendingAfter: number;
  latency: LoadRun['latency'];
  /** After boot and a full GC, before the load. */
  rssStartMiB: number;
  heapStartMiB: number;
  /** At the end of the load, before a GC. */
  rssEndMiB: number;
  /** At the end, after a full GC: what the process keeps. */
  rssEndAfterGcMiB: number;
  heapEndAfterGcMiB: number;
  /** The embedded broker thread's heap after a GC there, at the start and the end (NaN without one). */
  brokerHeapStartMiB: number;
  brokerHeapEndAfterGcMiB: number;
  peakRssMiB: number;
  /** RSS and heap over the run: seconds since the load started, MiB. */
  samples: { atSeconds: number; rssMiB: number; heapMiB: number }[];
  cpu: Record<string, number>;
  /** The unlock load beside login floods, one phase per address count. */
  floods: FloodPhase[];
}

export async function runSoak(options: SoakOptions): Promise<SoakResult> {
  const stations = options.stations ?? 1000;
  const locks = options.locks ?? 4;
  const connections = options.connections ?? 10;
  const amount = Math.max(connections, Math.round(options.rate * options.seconds));
  const servers = await startUnlockServers({ broker: 'embedded', stations, locks, countMessages: true, verbose: options.verbose ?? false });
  try {
    const token = await login(servers.apiUrl);
    const start = await servers.apiStats('gc');
    const samples: SoakResult['samples'] = [];
    const started = performance.now();
    const sample = (stats: ServerStats): void => {
      samples.push({ atSeconds: round((performance.now() - started) / 1000, 0), rssMiB: mib(stats.memory.rss), heapMiB: mib(stats.memory.heapUsed) });
    };
    sample(start);
    const sampler = setInterval(() => {
      servers.apiStats().then(sample, () => undefined);
    }, (options.sampleEverySeconds ?? 10) * 1000);
    let load: LoadRun;
    try {
      options.log(`soak: ${amount} unlocks at ${options.rate}/s over ${connections} connections (${options.seconds} s)`);
      load = await runLoad(
        { url: servers.apiUrl, kind: 'unlock', connections, amount, overallRate: options.rate, stations, locks },
        { token, processes: servers.processes, verbose: options.verbose ?? false, timeoutMs: (options.seconds + 120) * 1000 },
      );
    } finally {
      clearInterval(sampler);
    }
    const end = await servers.apiStats();
    sample(end);
    const endGc = await servers.apiStats('gc');
    const result: SoakResult = {
      seconds: options.seconds,
      rate: options.rate,
      connections,
      requests: amount,
      ok: load.ok,
      lost: amount - load.ok,
      non2xx: load.non2xx,
      bodyFailures: load.bodyFailures,
      errors: load.errors,
      timeouts: load.timeouts,
      commandsAtBroker: endGc.traffic?.commands ?? Number.NaN,
      acksAtBroker: endGc.traffic?.acks ?? Number.NaN,
      pendingAfter: endGc.pendingCommands,
      latency: load.latency,
      rssStartMiB: mib(start.memory.rss),
      heapStartMiB: mib(start.memory.heapUsed),
      rssEndMiB: mib(end.memory.rss),
      rssEndAfterGcMiB: mib(endGc.memory.rss),
      heapEndAfterGcMiB: mib(endGc.memory.heapUsed),
      brokerHeapStartMiB: start.brokerHeapUsed === undefined ? Number.NaN : mib(start.brokerHeapUsed),
      brokerHeapEndAfterGcMiB: endGc.brokerHeapUsed === undefined ? Number.NaN : mib(endGc.brokerHeapUsed),
      peakRssMiB: round(endGc.memory.maxRssKiB / 1024),
      samples,
      cpu: load.cpu,
      floods: [],
    };
    options.log(
      `soak: ${result.ok}/${result.requests} ok, ${result.lost} lost; commands ${result.commandsAtBroker}, acks ${result.acksAtBroker}; ` +
        `RSS ${result.rssStartMiB} → ${result.rssEndMiB} MiB (${result.rssEndAfterGcMiB} after GC), heap ${result.heapStartMiB} → ${result.heapEndAfterGcMiB} MiB, ` +
        `broker thread's heap ${result.brokerHeapStartMiB} → ${result.brokerHeapEndAfterGcMiB} MiB`,
    );
    const floodSeconds = options.floodSeconds ?? 60;
    if (floodSeconds > 0) {
      for (const addresses of options.floodAddresses ?? [1, 64]) {
        const phase = await runFloodPhase(servers, token, { ...options, stations, locks, connections, floodSeconds, addresses, quietP99: result.latency.p99 });
        result.floods.push(phase);
      }
    }
    return result;
  } finally {
    await servers.stop();
  }
}

/** Seconds the flood runs past the unlock load's length, to cover the load driver's start-up. */
const FLOOD_MARGIN_SECONDS = 3;
/** Real logins timed during a flood, one a second. */
const REAL_LOGINS = 5;

interface FloodPhaseOptions extends SoakOptions {
  stations: number;
  locks: number;
  connections: number;
  floodSeconds: number;
  addresses: number;
  quietP99: number;
}

async function runFloodPhase(servers: UnlockServers, token: string, options: FloodPhaseOptions): Promise<FloodPhase> {
  const floodRate = options.floodRate ?? 43;
  const amount = Math.max(options.connections, Math.round(options.rate * options.floodSeconds));
  const seconds = options.floodSeconds + FLOOD_MARGIN_SECONDS;
  const config: FloodConfig = { url: servers.apiUrl, rate: floodRate, seconds, addresses: options.addresses };
  let floodStarted: () => void = () => undefined;
  const started = new Promise<void>((resolve) => (floodStarted = resolve));
  const flood = startChild<FloodFigures>({
    script: 'login-flood.ts',
    args: ['--config', JSON.stringify(config)],
    label: `login flood ×${options.addresses}`,
    echo: options.verbose ?? false,
    readyTimeoutMs: (seconds + 60) * 1000,
    onProgress: () => floodStarted(),
  });
  try {
    await Promise.race([started, flood.ready]);
    options.log(`soak: ${amount} unlocks at ${options.rate}/s beside ${floodRate} wrong logins/s from ${options.addresses} address(es) (${options.floodSeconds} s)`);
    const realLogins = timeRealLogins(servers.apiUrl);
    const load = await runLoad(
      { url: servers.apiUrl, kind: 'unlock', connections: options.connections, amount, overallRate: options.rate, stations: options.stations, locks: options.locks },
      { token, processes: servers.processes, verbose: options.verbose ?? false, timeoutMs: (options.floodSeconds + 120) * 1000 },
    );
    const figures = await flood.ready;
    const phase: FloodPhase = {
      addresses: options.addresses,
      floodRate,
      seconds: options.floodSeconds,
      flood: figures,
      unlock: { requests: amount, ok: load.ok, latency: load.latency },
      p99Ratio: round(load.latency.p99 / options.quietP99, 2),
      realLogins: await realLogins,
      cpu: load.cpu,
    };
    options.log(
      `soak beside the flood from ${options.addresses} address(es): unlocks ${load.ok}/${amount} ok, p99 ${round(load.latency.p99, 2)} ms (×${phase.p99Ratio} the quiet soak's); ` +
        `flood answers ${JSON.stringify(figures.statuses)}, ${figures.skipped} skipped; real logins ${JSON.stringify(phase.realLogins.statuses)}, p99 ${round(phase.realLogins.latency.p99, 0)} ms`,
    );
    return phase;
  } finally {
    await flood.stop();
  }
}

/** Logs in as the bench account once a second, from 127.0.0.1 (not a flooding address), timing each. */
async function timeRealLogins(apiUrl: string): Promise<FloodPhase['realLogins']> {
  const statuses: Record<string, number> = {};
  const times: number[] = [];
  for (let n = 0; n < REAL_LOGINS; n += 1) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const startedAt = performance.now();
    const status = await fetch(`${apiUrl}/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(BENCH_ACCOUNT),
      signal: AbortSignal.timeout(10_000),
    }).then(
      async (response) => {
        await response.arrayBuffer();
        return String(response.status);
      },
      () => 'error',
    );
    times.push(performance.now() - startedAt);
    statuses[status] = (statuses[status] ?? 0) + 1;
  }
  return { statuses, latency: summarizeLatencies(times) };
}
