/**
 * The `tls` part (issue 17, "Performance, in the benchmark"): MQTT over TLS with per-station
 * certificates against Mosquitto configured as production (docs/mosquitto/station-sim.conf and acl).
 *
 * - a test PKI for the boot fleet's tokens (`generateTestPki`, what `station-sim certs` runs), made
 *   once per fleet size in a folder under the OS's temporary directory and reused (generation is
 *   idempotent: a second call keeps every certificate), timed apart from boot;
 * - per run: N stations with their own certificates boot against a fresh production Mosquitto, then
 *   the broker is killed and restarted and the fleet's online count is sampled until every station
 *   is back (the reconnect storm); in another fresh Mosquitto, N raw mqtt.js clients over TLS, each
 *   with station i's certificate, do the same MQTT work (the baseline);
 * - the unlock round trip over TLS: one simulator process (fleet, API, control plane) on the
 *   production Mosquitto, sequential unlocks through `/v1`, beside the same on that Mosquitto with
 *   `set_tcp_nodelay true` added and on an open Mosquitto (plain TCP, TCP_NODELAY).
 *
 * Every fleet, baseline and simulator runs in a fresh child process (bench/children/*).
 */
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { generateTestPki } from '../src/certs/test-pki.js';
import { toFailure, type BootFailure } from './boot.js';
import type { FleetBootFigures, StormSamples } from './children/boot-fleet.js';
import type { RawBootFigures } from './children/raw-clients.js';
import { startChild, type BenchChild } from './lib/child.js';
import { bootTokens, unlockPath, unlockTargets, unlockTokens } from './lib/fixtures.js';
import { startMosquitto } from './lib/mosquitto.js';
import { startBenchProductionMosquitto, type BenchProductionMosquitto } from './lib/production-mosquitto.js';
import type { ProcessMemory } from './lib/protocol.js';
import { login, writeUnlockFixture } from './lib/servers.js';
import { median, medianFigures, round, summarizeLatencies, type LatencySummary } from './lib/stats.js';

export interface TlsOptions {
  /** Stations of the TLS boot and of the baseline. @default 10000 (quick 1000) */
  stations: number;
  locks: number;
  runs: number;
  /** Stations of the unlock fleet. @default 100 */
  unlockStations: number;
  /** Sequential unlocks per broker and run. @default 300 */
  unlocks: number;
  /** At most this long for the sequential unlocks of one broker. @default 60 */
  unlockSeconds: number;
  /** How long the fleet may take to come back after the restart. @default 120 */
  stormSeconds: number;
  /** Between samples of the online count during the storm. @default 200 */
  stormIntervalMs: number;
  log: (line: string) => void;
  verbose?: boolean;
}

export interface PkiFigures {
  dir: string;
  /** Station certificates in the folder (boot fleet and unlock fleet). */
  stations: number;
  /** Time of `generateTestPki`: minutes the first time for 10,000, a check of every certificate when reused. */
  ms: number;
  issued: number;
  kept: number;
  /** Whether every certificate was already there. */
  reused: boolean;
}

export interface TlsBootRun {
  bootMs: number;
  peakRssMiB: number;
  kibPerClient: number;
  brokerPeakRssMiB: number;
  brokerKibPerClient: number;
  stopMs?: number;
}

export interface TlsBootRow {
  kind: 'stations' | 'raw-mqtt';
  count: number;
  runs: TlsBootRun[];
  median: Partial<TlsBootRun>;
  failures: BootFailure[];
}

export interface StormRun {
  allBack: boolean;
  /** From the kill of Mosquitto until every station was online again (by the samples). */
  killToAllBackMs: number;
  /** From the moment the restarted Mosquitto accepted connections until every station was back. */
  restartToAllBackMs: number;
  /** Kill and start of Mosquitto, until its ports accepted connections. */
  restartMs: number;
  /** Fewest stations online in a sample. */
  lowestOnline: number;
  /** Most stations that came back between two samples, per second. */
  peakPerSecond: number;
  /** N ÷ restartToAllBack. */
  meanPerSecond: number;
  samples: number;
  /** The samples, thinned to at most 100 (ms after the kill, online). */
  curve: [number, number][];
}

export interface SequentialUnlocks {
  requests: number;
  ok: number;
  firstFailure?: string;
  seconds: number;
  latency: LatencySummary;
}

export interface TlsUnlockRun {
  /** Mosquitto as docs/mosquitto/station-sim.conf ships it. */
  tls: SequentialUnlocks;
  /** The same with `set_tcp_nodelay true` added (the open Mosquitto of the other parts has it). */
  tlsNoDelay: SequentialUnlocks;
  /** An open Mosquitto on plain TCP (bench/lib/mosquitto.ts). */
  plain: SequentialUnlocks;
  p50Ratio: number;
  p99Ratio: number;
  noDelayP50Ratio: number;
  noDelayP99Ratio: number;
}

export interface TlsResult {
  pki?: PkiFigures;
  stations: number;
  locks: number;
  boot: TlsBootRow[];
  /** Median boot of the stations ÷ median boot of the raw clients (target ≤ 2). */
  bootRatio?: number;
  storm: StormRun[];
  stormFailures: string[];
  stormMedian: Partial<Omit<StormRun, 'curve' | 'allBack'>>;
  unlockStations: number;
  unlock: TlsUnlockRun[];
  unlockFailures: string[];
  unlockMedian: {
    tlsP50?: number;
    tlsP99?: number;
    noDelayP50?: number;
    noDelayP99?: number;
    plainP50?: number;
    plainP99?: number;
    p50Ratio?: number;
    p99Ratio?: number;
    noDelayP50Ratio?: number;
    noDelayP99Ratio?: number;
  };
}

/**
 * How long a boot over TLS may take: 2 minutes, or 20 ms per client when that is more. A TLS
 * connection with a client certificate costs the connecting process about 5 ms of CPU here (2,000
 * stations took 11 s, the stations' process busy, Mosquitto at 20 %), so 10,000 take about a minute.
 */
export function tlsBootTimeoutMs(count: number): number {
  return Math.max(120_000, count * 20);
}

/** Where the PKI of a fleet of `stations` is kept between runs. */
export function pkiDir(stations: number): string {
  return path.join(tmpdir(), `station-sim-bench-pki-${stations}`);
}

export async function runTls(options: TlsOptions): Promise<TlsResult> {
  const { stations, locks } = options;
  const result: TlsResult = {
    stations,
    locks,
    boot: [
      { kind: 'stations', count: stations, runs: [], median: {}, failures: [] },
      { kind: 'raw-mqtt', count: stations, runs: [], median: {}, failures: [] },
    ],
    storm: [],
    stormFailures: [],
    stormMedian: {},
    unlockStations: options.unlockStations,
    unlock: [],
    unlockFailures: [],
    unlockMedian: {},
  };

  const dir = pkiDir(stations);
  const tokens = [...bootTokens(stations), ...unlockTokens(options.unlockStations)];
  const existed = existsSync(path.join(dir, 'index.json'));
  const started = performance.now();
  const made = await generateTestPki({ dir, tokens });
  const ms = Math.round(performance.now() - started);
  result.pki = { dir, stations: tokens.length, ms, issued: made.issued.length, kept: made.kept, reused: existed && made.issued.length === 0 };
  options.log(`tls pki ${tokens.length} stations in ${dir}: ${(ms / 1000).toFixed(1)} s (${made.issued.length} issued, ${made.kept} kept)`);

  const [stationsRow, rawRow] = result.boot as [TlsBootRow, TlsBootRow];
  for (let run = 1; run <= options.runs; run += 1) {
    const label = `tls ${stations.toLocaleString('en')} run ${run}/${options.runs}`;
    // Stations (with the storm after their boot) and baseline alternate inside a run.
    try {
      const { boot, storm } = await stationsRun(dir, options);
      stationsRow.runs.push(boot);
      options.log(`${label} stations: ${(boot.bootMs / 1000).toFixed(2)} s, ${boot.kibPerClient} KiB/station, Mosquitto ${boot.brokerKibPerClient} KiB/session`);
      if (storm) {
        result.storm.push(storm);
        options.log(
          `${label} storm: ${storm.allBack ? 'all back' : 'NOT all back'} ${(storm.killToAllBackMs / 1000).toFixed(1)} s after the kill (${(storm.restartToAllBackMs / 1000).toFixed(1)} s after the restart), peak ${Math.round(storm.peakPerSecond)}/s, mean ${Math.round(storm.meanPerSecond)}/s`,
        );
      }
    } catch (error) {
      const failure = toFailure(error);
      stationsRow.failures.push(failure);
      result.stormFailures.push(failure.error);
      options.log(`${label} stations: FAILED: ${failure.error}`);
    }
    try {
      const raw = await rawRun(dir, options);
      rawRow.runs.push(raw);
      options.log(`${label} raw mqtt.js: ${(raw.bootMs / 1000).toFixed(2)} s, ${raw.kibPerClient} KiB/client`);
    } catch (error) {
      const failure = toFailure(error);
      rawRow.failures.push(failure);
      options.log(`${label} raw mqtt.js: FAILED: ${failure.error}`);
    }
  }
  for (const row of result.boot) row.median = medianFigures(row.runs as unknown as Record<string, number>[]) as Partial<TlsBootRun>;
  if (stationsRow.median.bootMs !== undefined && rawRow.median.bootMs !== undefined) result.bootRatio = round(stationsRow.median.bootMs / rawRow.median.bootMs, 2);
  const storms = result.storm.map(({ curve: _curve, allBack: _allBack, ...figures }) => figures);
  result.stormMedian = medianFigures(storms as unknown as Record<string, number>[]) as TlsResult['stormMedian'];

  for (let run = 1; run <= options.runs; run += 1) {
    try {
      const tls = await unlockRun(dir, 'tls', options);
      const tlsNoDelay = await unlockRun(dir, 'tls-nodelay', options);
      const plain = await unlockRun(dir, 'plain', options);
      const ratio = (a: number, b: number): number => round(a / b, 2);
      const entry: TlsUnlockRun = {
        tls,
        tlsNoDelay,
        plain,
        p50Ratio: ratio(tls.latency.p50, plain.latency.p50),
        p99Ratio: ratio(tls.latency.p99, plain.latency.p99),
        noDelayP50Ratio: ratio(tlsNoDelay.latency.p50, plain.latency.p50),
        noDelayP99Ratio: ratio(tlsNoDelay.latency.p99, plain.latency.p99),
      };
      result.unlock.push(entry);
      const show = (name: string, figures: SequentialUnlocks): string =>
        `${name} p50 ${figures.latency.p50.toFixed(2)} / p99 ${figures.latency.p99.toFixed(2)} ms (${figures.ok}/${figures.requests} ok)`;
      options.log(`tls unlock run ${run}/${options.runs}: ${show('TLS', tls)}, ${show('TLS + nodelay', tlsNoDelay)}, ${show('plain', plain)}`);
    } catch (error) {
      const message = `tls unlock run ${run}: ${error instanceof Error ? error.message : String(error)}`;
      result.unlockFailures.push(message);
      options.log(`${message} (FAILED)`);
    }
  }
  if (result.unlock.length > 0) {
    const of = (pick: (run: TlsUnlockRun) => number): number => round(median(result.unlock.map(pick)), 2);
    result.unlockMedian = {
      tlsP50: of((run) => run.tls.latency.p50),
      tlsP99: of((run) => run.tls.latency.p99),
      noDelayP50: of((run) => run.tlsNoDelay.latency.p50),
      noDelayP99: of((run) => run.tlsNoDelay.latency.p99),
      plainP50: of((run) => run.plain.latency.p50),
      plainP99: of((run) => run.plain.latency.p99),
      p50Ratio: of((run) => run.p50Ratio),
      p99Ratio: of((run) => run.p99Ratio),
      noDelayP50Ratio: of((run) => run.noDelayP50Ratio),
      noDelayP99Ratio: of((run) => run.noDelayP99Ratio),
    };
  }
  return result;
}

/** Boots the fleet with certificates on a fresh production Mosquitto, then restarts the broker under it. */
async function stationsRun(dir: string, options: TlsOptions): Promise<{ boot: TlsBootRun; storm?: StormRun }> {
  const mosquitto = await startBenchProductionMosquitto({ certsDir: dir });
  let child: BenchChild<FleetBootFigures> | undefined;
  try {
    const brokerBefore = mosquitto.memory();
    child = startChild<FleetBootFigures>({
      script: 'boot-fleet.ts',
      args: ['--stations', String(options.stations), '--locks', String(options.locks), '--broker', mosquitto.certificateUrl, '--certs', dir],
      readyTimeoutMs: tlsBootTimeoutMs(options.stations),
      label: `tls stations ×${options.stations}`,
      echo: options.verbose ?? false,
    });
    const ready = await child.ready;
    const boot = bootFigures(ready, options.stations, child.peakRssKiB, brokerBefore, mosquitto.memory());
    const storm = await restartStorm(child, mosquitto, options);
    const stopped = await child.stop<{ stopMs: number }>(tlsBootTimeoutMs(options.stations));
    if (stopped) boot.stopMs = Math.round(stopped.stopMs);
    return { boot, storm };
  } finally {
    await child?.stop(5000);
    await mosquitto.stop();
  }
}

/** Kills and restarts Mosquitto while the child samples its online count; the figures of the recovery. */
async function restartStorm(child: BenchChild<FleetBootFigures>, mosquitto: BenchProductionMosquitto, options: TlsOptions): Promise<StormRun> {
  const watching = child.call<StormSamples>('storm', { intervalMs: options.stormIntervalMs, timeoutMs: options.stormSeconds * 1000 }, options.stormSeconds * 1000 + 30_000);
  // Let the first sample (everyone online) be taken before the kill.
  await new Promise((resolve) => setTimeout(resolve, options.stormIntervalMs));
  const killAt = Date.now();
  await mosquitto.restart();
  const restartedAt = Date.now();
  const { samples, allBack, stations } = await watching;
  return stormFigures(samples, allBack, stations, killAt, restartedAt);
}

/** The storm's figures from the samples (pure). */
export function stormFigures(samples: { at: number; online: number }[], allBack: boolean, stations: number, killAt: number, restartedAt: number): StormRun {
  const last = samples[samples.length - 1];
  const backAt = allBack && last ? last.at : Number.NaN;
  let peak = 0;
  for (let index = 1; index < samples.length; index += 1) {
    const [before, after] = [samples[index - 1]!, samples[index]!];
    const seconds = (after.at - before.at) / 1000;
    if (seconds > 0 && after.online > before.online) peak = Math.max(peak, (after.online - before.online) / seconds);
  }
  const restartToAllBackMs = backAt - restartedAt;
  const step = Math.max(1, Math.ceil(samples.length / 100));
  return {
    allBack,
    killToAllBackMs: backAt - killAt,
    restartToAllBackMs,
    restartMs: restartedAt - killAt,
    lowestOnline: Math.min(...samples.map((sample) => sample.online)),
    peakPerSecond: Math.round(peak),
    meanPerSecond: Math.round(stations / (Math.max(restartToAllBackMs, 1) / 1000)),
    samples: samples.length,
    curve: samples.filter((_, index) => index % step === 0 || index === samples.length - 1).map((sample) => [sample.at - killAt, sample.online]),
  };
}

/** N raw mqtt.js clients over TLS with the stations' certificates, on a fresh production Mosquitto. */
async function rawRun(dir: string, options: TlsOptions): Promise<TlsBootRun> {
  const mosquitto = await startBenchProductionMosquitto({ certsDir: dir });
  let child: BenchChild<RawBootFigures> | undefined;
  try {
    const brokerBefore = mosquitto.memory();
    child = startChild<RawBootFigures>({
      script: 'raw-clients.ts',
      args: ['--clients', String(options.stations), '--locks', String(options.locks), '--broker', mosquitto.certificateUrl, '--certs', dir],
      readyTimeoutMs: tlsBootTimeoutMs(options.stations),
      label: `tls raw mqtt.js ×${options.stations}`,
      echo: options.verbose ?? false,
    });
    const ready = await child.ready;
    const figures = bootFigures(ready, options.stations, child.peakRssKiB, brokerBefore, mosquitto.memory());
    const stopped = await child.stop<{ stopMs: number }>(tlsBootTimeoutMs(options.stations));
    if (stopped) figures.stopMs = Math.round(stopped.stopMs);
    return figures;
  } finally {
    await child?.stop(5000);
    await mosquitto.stop();
  }
}

function bootFigures(
  ready: { bootMs: number; before: ProcessMemory; after: ProcessMemory & { maxRssKiB: number } },
  count: number,
  childPeakKiB: number | undefined,
  brokerBefore: { rssKiB: number } | undefined,
  brokerAfter: { rssKiB: number; hwmKiB: number } | undefined,
): TlsBootRun {
  return {
    bootMs: Math.round(ready.bootMs),
    peakRssMiB: round(Math.max(childPeakKiB ?? 0, ready.after.maxRssKiB) / 1024),
    kibPerClient: round((ready.after.rss - ready.before.rss) / 1024 / count, 1),
    brokerPeakRssMiB: brokerAfter ? round(brokerAfter.hwmKiB / 1024) : Number.NaN,
    brokerKibPerClient: brokerBefore && brokerAfter ? round((brokerAfter.rssKiB - brokerBefore.rssKiB) / count, 1) : Number.NaN,
  };
}

/**
 * One simulator process (fleet, `/v1` API, control plane) on the production Mosquitto with the
 * stations' and the service's certificates (`tls`), or on an open Mosquitto (`plain`); sequential
 * unlocks, each timed from the request to the body read.
 */
async function unlockRun(dir: string, kind: 'tls' | 'tls-nodelay' | 'plain', options: TlsOptions): Promise<SequentialUnlocks> {
  const production = kind === 'plain' ? undefined : await startBenchProductionMosquitto({ certsDir: dir, ...(kind === 'tls-nodelay' ? { extraLines: ['set_tcp_nodelay true'] } : {}) });
  const open = kind === 'plain' ? await startMosquitto() : undefined;
  const url = production?.certificateUrl ?? open!.url;
  // The plain run's fixture has an empty `mqtt` section, so --broker-auth (an embedded-broker setting) stays out of it.
  const fixture = writeUnlockFixture(options.unlockStations, options.locks, kind === 'plain' ? {} : { certs: dir });
  let child: BenchChild<{ apiUrl?: string }> | undefined;
  try {
    child = startChild<{ apiUrl?: string }>({
      script: 'simulator.ts',
      args: ['--fixture', fixture.path, '--broker', url, '--with-api'],
      label: `tls unlock simulator (${kind})`,
      echo: options.verbose ?? false,
    });
    const { apiUrl } = await child.ready;
    if (!apiUrl) throw new Error('the simulator started without its API');
    const token = await login(apiUrl);
    return await sequentialUnlocks(apiUrl, token, options);
  } finally {
    await child?.stop();
    await production?.stop();
    await open?.stop();
    fixture.remove();
  }
}

/** 20 unmeasured unlocks, then up to `options.unlocks` measured, one at a time, within `options.unlockSeconds`. */
async function sequentialUnlocks(apiUrl: string, token: string, options: TlsOptions): Promise<SequentialUnlocks> {
  const targets = unlockTargets(options.unlockStations, options.locks);
  const warmup = 20;
  const latencies: number[] = [];
  const result: Omit<SequentialUnlocks, 'latency'> = { requests: 0, ok: 0, seconds: 0 };
  const started = performance.now();
  const deadline = started + options.unlockSeconds * 1000;
  for (let index = 0; index < warmup + options.unlocks && performance.now() < deadline; index += 1) {
    // Consecutive requests go to different stations, and a lock comes round again only after its relock.
    const target = targets[index % targets.length]!;
    const sent = performance.now();
    const response = await fetch(apiUrl + unlockPath(target), { method: 'POST', headers: { authorization: `Bearer ${token}` } });
    const text = await response.text();
    const elapsed = performance.now() - sent;
    if (index < warmup) continue;
    result.requests += 1;
    if (response.status === 200 && text === '{"success":true}') {
      result.ok += 1;
      latencies.push(elapsed);
    } else result.firstFailure ??= `${response.status} ${text.slice(0, 200)}`;
  }
  result.seconds = round((performance.now() - started) / 1000, 1);
  return { ...result, latency: summarizeLatencies(latencies) };
}
