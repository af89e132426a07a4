/**
 * Part 4: the soak. The whole simulator in one process (embedded broker) under a moderate, steady
 * unlock load for minutes: memory at the start and the end, and a count of every request, so that a
 * lost or failed one shows. The driver sends a fixed number of requests at a fixed rate and waits for
 * every answer; the embedded broker counts the unlock commands and acks that pass through it.
 */
import { login, runLoad, startUnlockServers, type LoadRun } from './lib/servers.js';
import type { ServerStats } from './lib/server-stats.js';
import { mib, round } from './lib/stats.js';

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
  log: (line: string) => void;
  verbose?: boolean;
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
    };
    options.log(
      `soak: ${result.ok}/${result.requests} ok, ${result.lost} lost; commands ${result.commandsAtBroker}, acks ${result.acksAtBroker}; ` +
        `RSS ${result.rssStartMiB} → ${result.rssEndMiB} MiB (${result.rssEndAfterGcMiB} after GC), heap ${result.heapStartMiB} → ${result.heapEndAfterGcMiB} MiB, ` +
        `broker thread's heap ${result.brokerHeapStartMiB} → ${result.brokerHeapEndAfterGcMiB} MiB`,
    );
    return result;
  } finally {
    await servers.stop();
  }
}
