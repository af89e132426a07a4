/**
 * The servers an unlock measurement runs against, each in its own process: with the embedded broker,
 * one simulator process (broker + fleet + API, as `station-sim up`); with Mosquitto, a fresh
 * Mosquitto, a stations process (`station-sim stations --broker`) and an API process
 * (`station-sim api --broker`). Plus the hello-world baseline, and the load driver.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startChild, type BenchChild } from './child.js';
import type { LoadConfig, LoadFigures } from '../children/load.js';
import { BENCH_ACCOUNT, unlockFixture, unlockPath, unlockTargets } from './fixtures.js';
import { startMosquitto, type StartedMosquitto } from './mosquitto.js';
import { readCpuSeconds, readMachineBusySeconds } from './proc.js';
import type { ServerStats } from './server-stats.js';
import type { LatencySummary } from './stats.js';
import type { BrokerKind } from '../boot.js';

/** A process taking part in a measurement, for CPU accounting. */
export interface MeasuredProcess {
  name: string;
  pid: number;
}

export interface UnlockServers {
  readonly apiUrl: string;
  /** The processes that serve an unlock (API, broker, stations). */
  readonly processes: MeasuredProcess[];
  /** Stats of the process running the API (`gc` runs a full GC first). */
  apiStats(method?: 'stats' | 'gc'): Promise<ServerStats>;
  /** Calls a method of the process running the API (`profile-start`, `profile-stop`…). */
  callApi<T>(method: string, params?: unknown): Promise<T>;
  stop(): Promise<void>;
}

export interface UnlockServerOptions {
  broker: BrokerKind;
  stations: number;
  locks: number;
  /** Count unlock commands and acks at the embedded broker (the soak's loss check). @default false */
  countMessages?: boolean;
  /** The fixture's `judge` section, e.g. `{ enabled: false }` (the `judge` part). @default none: the judge on */
  judge?: object;
  verbose?: boolean;
}

/** Writes the unlock fixture to a temporary file for the children; `remove()` deletes it. */
export function writeUnlockFixture(stations: number, locks: number, mqtt?: object, judge?: object): { path: string; remove(): void } {
  const dir = mkdtempSync(path.join(tmpdir(), 'station-sim-bench-'));
  const file = path.join(dir, 'unlock-fixture.json');
  writeFileSync(file, JSON.stringify(unlockFixture({ stations, locksPerStation: locks, ...(mqtt === undefined ? {} : { mqtt }), ...(judge === undefined ? {} : { judge }) })));
  return { path: file, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export async function startUnlockServers(options: UnlockServerOptions): Promise<UnlockServers> {
  const fixture = writeUnlockFixture(options.stations, options.locks, undefined, options.judge);
  const children: BenchChild[] = [];
  let mosquitto: StartedMosquitto | undefined;
  const stop = async (): Promise<void> => {
    // The API first, so it does not log a lost broker; then the stations, then the broker.
    for (const child of children.reverse()) await child.stop();
    await mosquitto?.stop();
    fixture.remove();
  };
  try {
    const echo = options.verbose ?? false;
    if (options.broker === 'embedded') {
      const sim = startChild<{ apiUrl: string }>({
        script: 'simulator.ts',
        args: ['--fixture', fixture.path, ...(options.countMessages ? ['--count-messages'] : [])],
        label: 'simulator',
        echo,
      });
      children.push(sim);
      const { apiUrl } = await sim.ready;
      return {
        apiUrl,
        processes: [{ name: 'simulator', pid: sim.pid }],
        apiStats: (method = 'stats') => sim.call<ServerStats>(method),
        callApi: (method, params) => sim.call(method, params),
        stop,
      };
    }
    mosquitto = await startMosquitto();
    const stations = startChild({ script: 'simulator.ts', args: ['--fixture', fixture.path, '--broker', mosquitto.url], label: 'stations', echo });
    children.push(stations);
    await stations.ready;
    const api = startChild<{ apiUrl: string }>({ script: 'api.ts', args: ['--fixture', fixture.path, '--broker', mosquitto.url], label: 'api', echo });
    children.push(api);
    const { apiUrl } = await api.ready;
    return {
      apiUrl,
      processes: [
        { name: 'api', pid: api.pid },
        { name: 'stations', pid: stations.pid },
        { name: 'mosquitto', pid: mosquitto.pid },
      ],
      apiStats: (method = 'stats') => api.call<ServerStats>(method),
      callApi: (method, params) => api.call(method, params),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** The hello-world baseline server. */
export async function startHello(verbose = false): Promise<{ url: string; process: MeasuredProcess; serverLatency(): Promise<LatencySummary>; stop(): Promise<void> }> {
  const child = startChild<{ url: string }>({ script: 'hello.ts', label: 'hello', echo: verbose });
  try {
    const { url } = await child.ready;
    return { url, process: { name: 'hello', pid: child.pid }, serverLatency: () => child.call<LatencySummary>('serverLatency'), stop: async () => void (await child.stop()) };
  } catch (error) {
    await child.stop();
    throw error;
  }
}

/** Logs in as the bench account; returns the access token (which nothing prints). */
export async function login(apiUrl: string): Promise<string> {
  const response = await fetch(`${apiUrl}/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(BENCH_ACCOUNT),
  });
  if (response.status !== 200) throw new Error(`login answered ${response.status}`);
  const body = (await response.json()) as { accessToken?: unknown };
  if (typeof body.accessToken !== 'string') throw new Error('login answered without an access token');
  return body.accessToken;
}

/** What the sequential sample of unlocks found. */
export interface SampleCheck {
  requests: number;
  ok: number;
  /** The first answer that was not 200 `{"success":true}`, if any. */
  firstFailure?: string;
}

/**
 * Sends `count` unlocks one after another (to locks spread over the fleet) and reads every body:
 * autocannon only counts status codes and body mismatches, so this shows what a failure says.
 */
export async function sampleUnlocks(apiUrl: string, token: string, stations: number, locks: number, count = 20): Promise<SampleCheck> {
  const targets = unlockTargets(stations, locks);
  const check: SampleCheck = { requests: 0, ok: 0 };
  for (let index = 0; index < count; index += 1) {
    const target = targets[Math.floor((index * targets.length) / count)]!;
    const response = await fetch(apiUrl + unlockPath(target), { method: 'POST', headers: { authorization: `Bearer ${token}` } });
    const text = await response.text();
    check.requests += 1;
    if (response.status === 200 && text === '{"success":true}') check.ok += 1;
    else check.firstFailure ??= `${response.status} ${text.slice(0, 200)}`;
  }
  return check;
}

/**
 * A load run's figures with the CPU each process used during it, in cores (1 = one core busy the
 * whole time); `others` is what the rest of the machine used meanwhile (other people's work).
 */
export interface LoadRun extends LoadFigures {
  /** Cores each measured process used, rounded to 0.01 (for reports). */
  cpu: Record<string, number>;
  /**
   * The same, not rounded: at 300 unlocks/s a server uses about 0.17 cores, and a hundredth of a
   * core is 6 % of that, too coarse for a figure compared against 1.05.
   */
  cpuExact?: Record<string, number>;
}

/**
 * Runs the load driver in its own process against `config.url`, and measures the CPU that
 * `processes` (and the driver itself) used meanwhile.
 */
export interface RunLoadOptions {
  /** Bearer token for unlocks; passed to the driver in its environment. */
  token?: string;
  /** Processes whose CPU is measured during the load. */
  processes: MeasuredProcess[];
  verbose?: boolean;
  /** How long the driver may take. @default ramp + duration + 60 s */
  timeoutMs?: number;
  /** Called when the measured part of the load starts (after the driver's own start-up and the ramp). */
  onStarted?: () => void;
}

export async function runLoad(config: LoadConfig, options: RunLoadOptions): Promise<LoadRun> {
  let driverPid = -1;
  const measured = (): MeasuredProcess[] => [...options.processes, { name: 'driver', pid: driverPid }];
  // CPU is counted from the moment the measured part starts (the driver says so), not from the driver's start-up or the ramp.
  let cpuBefore: (number | undefined)[] = [];
  let machineBefore: number | undefined;
  let started = performance.now();
  const driver = startChild<LoadFigures>({
    script: 'load.ts',
    args: ['--config', JSON.stringify(config)],
    env: options.token === undefined ? {} : { BENCH_TOKEN: options.token },
    readyTimeoutMs: options.timeoutMs ?? ((config.durationSeconds ?? 0) + (config.rampSeconds ?? 0) + 60) * 1000,
    label: `load ${config.kind} ×${config.connections}`,
    echo: options.verbose ?? false,
    onProgress: () => {
      cpuBefore = measured().map((process) => readCpuSeconds(process.pid));
      machineBefore = readMachineBusySeconds();
      started = performance.now();
      options.onStarted?.();
    },
  });
  driverPid = driver.pid;
  try {
    const figures = await driver.ready;
    const seconds = (performance.now() - started) / 1000;
    const machineAfter = readMachineBusySeconds();
    const cores = (used: number): number => Math.round((used / seconds) * 100) / 100;
    const cpu: Record<string, number> = {};
    const cpuExact: Record<string, number> = {};
    let ours = 0;
    measured().forEach((process, index) => {
      const before = cpuBefore[index];
      const after = readCpuSeconds(process.pid);
      if (before === undefined || after === undefined) return;
      cpu[process.name] = cores(after - before);
      cpuExact[process.name] = (after - before) / seconds;
      ours += after - before;
    });
    if (machineBefore !== undefined && machineAfter !== undefined) cpu.others = Math.max(0, cores(machineAfter - machineBefore - ours));
    return { ...figures, cpu, cpuExact };
  } finally {
    await driver.stop();
  }
}
