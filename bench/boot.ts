/**
 * Part 1 (and the boot half of part 3): fleet boot. For each fleet size, each run boots the
 * stations in a fresh child process, and the baseline, as many plain mqtt.js clients doing the same
 * MQTT work, in another; with Mosquitto, each run gets a fresh broker too, whose memory is read
 * from /proc before and after.
 */
import { ChildError, startChild } from './lib/child.js';
import type { FleetBootFigures } from './children/boot-fleet.js';
import type { RawBootFigures } from './children/raw-clients.js';
import type { ProcessMemory } from './lib/protocol.js';
import { startMosquitto, type StartedMosquitto } from './lib/mosquitto.js';
import { medianFigures, mib, round } from './lib/stats.js';

export type BrokerKind = 'embedded' | 'mosquitto';
export type BootKind = 'stations' | 'raw-mqtt';

export interface BootOptions {
  /** Which broker the clients connect to. */
  broker: BrokerKind;
  /** Fleet sizes, in stations (or raw clients). */
  sizes: number[];
  /** Locks per station. @default 4 */
  locks?: number;
  /** Runs per size; each figure is the median. */
  runs: number;
  /** Runs of a size of `bigSize` or more (100,000 stations take minutes each). @default 1 */
  bigRuns?: number;
  /** @default 100000 */
  bigSize?: number;
  /** Also boot the raw mqtt.js baseline. @default true */
  baseline?: boolean;
  /**
   * With Mosquitto, the most TCP clients one run may open: the broker holds one socket per
   * client in one process. Larger sizes are skipped with the reason. @default Infinity
   */
  maxTcpClients?: number;
  /** Progress lines. */
  log: (line: string) => void;
  /** Copy children's output to stderr. @default false */
  verbose?: boolean;
}

/** One run's figures: MiB, KiB and ms as named. */
export interface BootRunFigures {
  bootMs: number;
  fixtureMs?: number;
  retainedSettleMs?: number;
  stopMs?: number;
  /** Peak RSS of the process holding the clients (and, embedded, the broker). */
  peakRssMiB: number;
  rssAfterMiB: number;
  /** RSS growth of that process per client, after a full GC. */
  kibPerClient: number;
  /** JS heap growth per client, after a full GC. */
  heapKibPerClient: number;
  /** Mosquitto only: the broker's peak RSS and its RSS growth per client session. */
  brokerPeakRssMiB?: number;
  brokerKibPerClient?: number;
  /** Mosquitto only: client process plus broker, per client. */
  totalKibPerClient?: number;
}

export interface BootFailure {
  error: string;
  elapsedMs: number;
  peakRssMiB?: number;
  lastProgress?: unknown;
  /** The end of the child's output (an out-of-memory report, a stack). */
  outputTail?: string;
}

export interface BootRow {
  broker: BrokerKind;
  kind: BootKind;
  count: number;
  locks: number;
  /** Runs that finished, and their per-figure median. */
  runs: BootRunFigures[];
  median: Partial<BootRunFigures>;
  failures: BootFailure[];
  /** Why the row was not measured, when it was skipped. */
  skipped?: string;
}

export async function runBoot(options: BootOptions): Promise<BootRow[]> {
  const locks = options.locks ?? 4;
  const kinds: BootKind[] = options.baseline === false ? ['stations'] : ['stations', 'raw-mqtt'];
  const rows: BootRow[] = [];
  for (const count of options.sizes) {
    const sized = kinds.map((kind): BootRow => ({ broker: options.broker, kind, count, locks, runs: [], median: {}, failures: [] }));
    rows.push(...sized);
    if (options.broker === 'mosquitto' && count > (options.maxTcpClients ?? Infinity)) {
      const reason = `needs ${count.toLocaleString('en')} sockets in the one Mosquitto process; the limit here is ${options.maxTcpClients!.toLocaleString('en')}`;
      for (const row of sized) row.skipped = reason;
      options.log(`boot ${options.broker} ${count}: skipped (${reason})`);
      continue;
    }
    const runs = count >= (options.bigSize ?? 100_000) ? (options.bigRuns ?? 1) : options.runs;
    for (let run = 1; run <= runs; run += 1) {
      // Stations and baseline alternate inside a run, so a machine that gets busier affects both alike.
      for (const row of sized) {
        const label = `boot ${options.broker} ${row.kind} ${count.toLocaleString('en')} run ${run}/${runs}`;
        try {
          const figures = await bootOnce(row.kind, count, locks, options);
          row.runs.push(figures);
          options.log(`${label}: ${(figures.bootMs / 1000).toFixed(2)} s, peak ${figures.peakRssMiB} MiB, ${figures.kibPerClient} KiB/client`);
        } catch (error) {
          const failure = toFailure(error);
          row.failures.push(failure);
          options.log(`${label}: FAILED after ${(failure.elapsedMs / 1000).toFixed(1)} s: ${failure.error}`);
        }
      }
    }
    for (const row of sized) row.median = medianFigures(row.runs as unknown as Record<string, number>[]) as Partial<BootRunFigures>;
  }
  return rows;
}

/** How long one boot may take: a minute, or 3 ms per client when that is more. */
export function bootTimeoutMs(count: number): number {
  return Math.max(60_000, count * 3);
}

async function bootOnce(kind: BootKind, count: number, locks: number, options: BootOptions): Promise<BootRunFigures> {
  let mosquitto: StartedMosquitto | undefined;
  try {
    if (options.broker === 'mosquitto') mosquitto = await startMosquitto();
    const brokerBefore = mosquitto?.memory();
    const args = kind === 'stations' ? ['--stations', String(count)] : ['--clients', String(count)];
    const child = startChild<FleetBootFigures | RawBootFigures>({
      script: kind === 'stations' ? 'boot-fleet.ts' : 'raw-clients.ts',
      args: [...args, '--locks', String(locks), ...(mosquitto ? ['--broker', mosquitto.url] : [])],
      readyTimeoutMs: bootTimeoutMs(count),
      label: `${kind} ×${count}`,
      echo: options.verbose ?? false,
    });
    let ready: FleetBootFigures | RawBootFigures;
    try {
      ready = await child.ready;
    } catch (error) {
      await child.stop(5000);
      throw error;
    }
    const brokerAfter = mosquitto?.memory();
    const peakKiB = Math.max(child.peakRssKiB ?? 0, ready.after.maxRssKiB);
    const stopped = await child.stop<{ stopMs: number }>(bootTimeoutMs(count));
    const figures: BootRunFigures = {
      bootMs: Math.round(ready.bootMs),
      peakRssMiB: round(peakKiB / 1024),
      rssAfterMiB: mib(ready.after.rss),
      kibPerClient: perClientKiB(ready.before, ready.after, 'rss', count),
      heapKibPerClient: perClientKiB(ready.before, ready.after, 'heapUsed', count),
      ...(stopped ? { stopMs: Math.round(stopped.stopMs) } : {}),
    };
    if ('fixtureMs' in ready) {
      figures.fixtureMs = Math.round(ready.fixtureMs);
      if (ready.retainedSettleMs !== undefined) figures.retainedSettleMs = Math.round(ready.retainedSettleMs);
      if (ready.retained !== undefined && ready.retained !== count * (locks + 1)) {
        throw new Error(`the broker retained ${ready.retained} messages, expected ${count * (locks + 1)}`);
      }
    }
    if (brokerBefore && brokerAfter) {
      figures.brokerPeakRssMiB = round(brokerAfter.hwmKiB / 1024);
      figures.brokerKibPerClient = round((brokerAfter.rssKiB - brokerBefore.rssKiB) / count, 1);
      figures.totalKibPerClient = round(figures.kibPerClient + figures.brokerKibPerClient, 1);
    }
    return figures;
  } finally {
    await mosquitto?.stop();
  }
}

function perClientKiB(before: ProcessMemory, after: ProcessMemory, key: 'rss' | 'heapUsed', count: number): number {
  return round((after[key] - before[key]) / 1024 / count, 1);
}

/** A failed child as a boot row records it (also used by the tls part). */
export function toFailure(error: unknown): BootFailure {
  if (error instanceof ChildError) {
    return {
      error: error.message,
      elapsedMs: error.details.elapsedMs,
      ...(error.details.peakRssKiB === undefined ? {} : { peakRssMiB: round(error.details.peakRssKiB / 1024) }),
      ...(error.details.lastProgress === undefined ? {} : { lastProgress: error.details.lastProgress }),
      ...(error.details.stderrTail === '' ? {} : { outputTail: error.details.stderrTail.slice(-600) }),
    };
  }
  return { error: error instanceof Error ? error.message : String(error), elapsedMs: 0 };
}
