/**
 * The `up` part: `station-sim up` as a user runs it (the compiled CLI, the `ci` fixture with its
 * generated fleet grown to N stations × 4 locks, auth, judge and journal on), beside the boot
 * part's fleet boot of the same size in the same run (bench/boot.ts, `stations` only). Figures:
 * the time from the command's start to its ready line, its peak RSS, and, once ready and idle,
 * station reads through `/v1` and `/sim/v1/health` one at a time.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runBoot, type BootRow } from './boot.js';
import { readKernelMemory } from './lib/proc.js';
import { PRODUCT_NODE_FLAGS } from './lib/child.js';
import { percentile } from './lib/stats.js';

export interface UpScaleOptions {
  stations: number;
  locks: number;
  log: (line: string) => void;
  verbose?: boolean;
}

export interface UpScaleFigures {
  /** From spawning `station-sim up` to its ready line. */
  readyMs: number;
  peakRssMiB: number;
  /** What `up` said on stderr before it was ready (the heartbeat budget's notice, say). */
  notices: string[];
  readP50Ms: number;
  readP99Ms: number;
  healthP50Ms: number;
  healthP99Ms: number;
  stopMs: number;
}

export interface UpScaleResult {
  stations: number;
  locks: number;
  up?: UpScaleFigures;
  boot?: BootRow;
  failures: string[];
}

/** Issue 25: `up` ready within 1.3× the bench's boot of the same size, RSS within 1.2×, a station read ≤ 50 ms p99 while idle. */
export const UP_TARGETS = { readyRatio: 1.3, rssRatio: 1.2, readP99Ms: 50 } as const;

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const READS = 300;
const HEALTH_READS = 50;

export async function runUpScale(options: UpScaleOptions): Promise<UpScaleResult> {
  const result: UpScaleResult = { stations: options.stations, locks: options.locks, failures: [] };
  const [boot] = await runBoot({ broker: 'embedded', sizes: [options.stations], locks: options.locks, runs: 1, bigRuns: 1, baseline: false, log: options.log, ...(options.verbose ? { verbose: true } : {}) });
  result.boot = boot;
  try {
    result.up = await upOnce(options);
    const up = result.up;
    options.log(`up ${options.stations.toLocaleString('en')} × ${options.locks}: ready in ${(up.readyMs / 1000).toFixed(1)} s, peak ${up.peakRssMiB} MiB; idle reads p50 ${up.readP50Ms} / p99 ${up.readP99Ms} ms, health p50 ${up.healthP50Ms} / p99 ${up.healthP99Ms} ms`);
  } catch (error) {
    result.failures.push(error instanceof Error ? error.message : String(error));
    options.log(`up ${options.stations}: FAILED: ${result.failures.at(-1)}`);
  }
  return result;
}

/** The `ci` fixture with its generated fleet grown to `stations` × `locks`; the account keeps its named stations. */
function scaledCiFixture(stations: number, locks: number): object {
  const ci = JSON.parse(readFileSync(path.join(ROOT, 'fixtures/ci.json'), 'utf8')) as {
    $schema?: string;
    fleets: { count: number; locksPerStation: number; tokenPattern: string }[];
    accounts: { stations: string[] }[];
  };
  delete ci.$schema;
  const fleet = ci.fleets[0]!;
  fleet.count = stations;
  fleet.locksPerStation = locks;
  const generated = fleet.tokenPattern.split('{n}')[0]!;
  for (const account of ci.accounts) account.stations = account.stations.filter((token) => !token.startsWith(generated));
  return ci;
}

async function upOnce(options: UpScaleOptions): Promise<UpScaleFigures> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'station-sim-bench-up-'));
  const fixture = path.join(dir, 'fixture.json');
  writeFileSync(fixture, JSON.stringify(scaledCiFixture(options.stations, options.locks)));
  const started = performance.now();
  const child = spawn(process.execPath, [...PRODUCT_NODE_FLAGS, path.join(ROOT, 'bin/station-sim.js'), 'up', '--fixture', fixture, '--mqtt-port', '0', '--http-port', '0', '--json'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, CI: 'true' },
  });
  let peakKiB = 0;
  const sampler = setInterval(() => {
    const memory = child.pid === undefined ? undefined : readKernelMemory(child.pid);
    if (memory) peakKiB = Math.max(peakKiB, memory.hwmKiB);
  }, 200);
  const notices: string[] = [];
  child.stderr.setEncoding('utf8').on('data', (text: string) => {
    for (const line of text.split('\n')) if (line.trim()) notices.push(line.trim());
    if (options.verbose) process.stderr.write(text);
  });
  try {
    const ready = await new Promise<{ apiUrl: string }>((resolve, reject) => {
      let out = '';
      const timeoutMs = readyTimeoutMs(options.stations);
      const timer = setTimeout(() => reject(new Error(`no ready line within ${Math.round(timeoutMs / 1000)} s`)), timeoutMs);
      child.stdout.setEncoding('utf8').on('data', (text: string) => {
        out += text;
        const line = out.split('\n').find((candidate) => candidate.startsWith('{'));
        if (!line) return;
        clearTimeout(timer);
        resolve(JSON.parse(line) as { apiUrl: string });
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`station-sim up exited with ${code} before it was ready: ${notices.slice(-3).join(' | ')}`));
      });
    });
    const readyMs = performance.now() - started;
    // Idle: let the start's last messages settle before timing reads.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const reads = await timeReads(ready.apiUrl);
    const memory = child.pid === undefined ? undefined : readKernelMemory(child.pid);
    if (memory) peakKiB = Math.max(peakKiB, memory.hwmKiB);
    const stopStarted = performance.now();
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    await exited;
    return { readyMs: Math.round(readyMs), peakRssMiB: Math.round(peakKiB / 1024), notices, ...reads, stopMs: Math.round(performance.now() - stopStarted) };
  } finally {
    clearInterval(sampler);
    if (child.exitCode === null) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
}

function readyTimeoutMs(stations: number): number {
  return Math.max(120_000, stations * 6);
}

async function timeReads(apiUrl: string): Promise<Pick<UpScaleFigures, 'readP50Ms' | 'readP99Ms' | 'healthP50Ms' | 'healthP99Ms'>> {
  const login = await fetch(`${apiUrl}/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'ci@example.com', password: 'ci-password' }) });
  if (login.status !== 200) throw new Error(`login answered ${login.status}`);
  const { accessToken } = (await login.json()) as { accessToken: string };
  const time = async (count: number, url: string, headers: Record<string, string>): Promise<number[]> => {
    const times: number[] = [];
    for (let i = 0; i < count; i += 1) {
      const start = performance.now();
      const response = await fetch(url, { headers });
      await response.arrayBuffer();
      if (response.status !== 200) throw new Error(`${url} answered ${response.status}`);
      times.push(performance.now() - start);
    }
    return times;
  };
  const reads = await time(READS, `${apiUrl}/v1/stations/CI-1`, { authorization: `Bearer ${accessToken}` });
  const health = await time(HEALTH_READS, `${apiUrl}/sim/v1/health`, {});
  const ms = (values: number[], p: number): number => Math.round(percentile([...values].sort((a, b) => a - b), p) * 10) / 10;
  return { readP50Ms: ms(reads, 50), readP99Ms: ms(reads, 99), healthP50Ms: ms(health, 50), healthP99Ms: ms(health, 99) };
}
