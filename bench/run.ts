/**
 * The benchmark harness: `npm run bench [-- --quick] [--only boot,unlock,judge,mosquitto,soak,profile]`.
 * Runs each part, every measurement in fresh child processes, and writes the result as JSON
 * (`--out`, default bench/results/<date>.json) and as markdown tables, next to it and on stdout.
 * Progress goes to stderr. See bench/README.md for what each figure means.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runBoot } from './boot.js';
import { runUnlock } from './unlock.js';
import { runUpScale } from './up-scale.js';
import { runSoak } from './soak.js';
import { runProfile } from './profile.js';
import { runTls } from './tls.js';
import { runReset } from './reset.js';
import { runJudge } from './judge.js';
import { runJudgeCost, type JudgeCostOptions } from './judge-cost.js';
import { USAGE, defaultOutPath, parseBenchArgs, type BenchOptions } from './lib/args.js';
import { currentCommit, runHeader } from './lib/machine.js';
import { buildProduct } from './lib/product.js';
import { renderMarkdown, type BenchResult } from './lib/report.js';

let options: BenchOptions;
try {
  options = parseBenchArgs(process.argv.slice(2));
} catch (error) {
  process.stderr.write(`bench: ${(error as Error).message}\n\n${USAGE}`);
  process.exit(2);
}
if (options.help) {
  process.stdout.write(USAGE);
  process.exit(0);
}

// Every child inherits it; the bench fixtures then ask the embedded broker for authentication and ACLs (bench/lib/fixtures.ts).
if (options.brokerAuth) process.env.BENCH_BROKER_AUTH = '1';
else delete process.env.BENCH_BROKER_AUTH;
// Every child inherits it too: the compiled dist/ (built now) or src/ under tsx (bench/lib/product.ts).
if (options.source) process.env.BENCH_PRODUCT = 'source';
else {
  process.env.BENCH_PRODUCT = 'dist';
  buildProduct();
}

const startedAt = new Date();
const started = performance.now();
const log = (line: string): void => {
  const seconds = ((performance.now() - started) / 1000).toFixed(0).padStart(4);
  process.stderr.write(`[${seconds} s] ${line}\n`);
};
const { help: _help, out: _out, ...recorded } = options;
const result: BenchResult = { header: { ...(await runHeader(startedAt)), options: recorded }, errors: [] };
const outPath = options.out ?? defaultOutPath(startedAt, options.quick);
const verbose = options.verbose;

/** Runs one part; a part that throws is recorded and the next part still runs. */
async function part(name: string, body: () => Promise<void>): Promise<void> {
  log(`${name}: starting`);
  try {
    await body();
  } catch (error) {
    const message = `${name}: ${error instanceof Error ? error.message : String(error)}`;
    result.errors.push(message);
    log(`${message} (part FAILED)`);
  }
  save();
}

/** Writes what is known so far, so an interrupted run still leaves its figures behind. */
function save(): void {
  result.header.totalSeconds = Math.round((performance.now() - started) / 1000);
  result.header.loadAverageAtEnd = os.loadavg().map((value) => Math.round(value * 100) / 100);
  const commit = currentCommit();
  if (commit !== result.header.commit && commit !== undefined) result.header.commitAtEnd = commit;
  mkdirSync(path.dirname(outPath), { recursive: true });
  writeFileSync(outPath, `${JSON.stringify(result, null, 2)}\n`);
  writeFileSync(outPath.replace(/\.json$/, '') + '.md', renderMarkdown(result));
}

const unlockShape = {
  connections: options.connections,
  durationSeconds: options.durationSeconds,
  warmupSeconds: options.warmupSeconds,
  rampSeconds: options.rampSeconds,
  runs: options.runs,
  stations: options.unlockStations,
  locks: options.locks,
  log,
  verbose,
};

/** The load of the `judge` and `judge-cost` parts: the same flags drive both. */
const judgeLoad = (): JudgeCostOptions => ({
  rounds: options.judgeRounds,
  connections: options.judgeConnections,
  rate: options.judgeRate,
  durationSeconds: options.judgeSeconds,
  warmupSeconds: options.warmupSeconds,
  rampSeconds: options.rampSeconds,
  stations: options.unlockStations,
  locks: options.locks,
  log,
  verbose,
});

for (const name of options.parts) {
  switch (name) {
    case 'boot':
      await part('boot (embedded broker)', async () => {
        result.boot = await runBoot({ broker: 'embedded', sizes: options.sizes, locks: options.locks, runs: options.runs, bigRuns: options.bigRuns, log, verbose });
      });
      break;
    case 'up':
      await part('up (station-sim up beside a fleet boot)', async () => {
        result.up = await runUpScale({ stations: options.upStations, locks: options.locks, log, verbose });
      });
      break;
    case 'unlock':
      await part('unlock (embedded broker)', async () => {
        result.unlock = await runUnlock({ broker: 'embedded', ...unlockShape });
      });
      break;
    case 'judge':
      await part('judge (on and off, alternating)', async () => {
        result.judge = await runJudge({ ...judgeLoad(), aaControl: options.judgeAa });
      });
      break;
    case 'judge-cost':
      await part('judge-cost (fresh pairs per round, A/B and A/A)', async () => {
        result.judgeCost = await runJudgeCost({ ...judgeLoad(), loading: options.judgeLoading });
      });
      break;
    case 'mosquitto':
      await part('mosquitto', async () => {
        const limit = result.header.machine.openFilesLimit;
        const boot = await runBoot({
          broker: 'mosquitto',
          sizes: options.sizes,
          locks: options.locks,
          runs: options.runs,
          bigRuns: options.bigRuns,
          // Each client is a socket in the stations process and another in Mosquitto; leave room for the rest.
          ...(limit === undefined ? {} : { maxTcpClients: limit - 1000 }),
          log,
          verbose,
        });
        result.mosquitto = { boot, unlock: await runUnlock({ broker: 'mosquitto', ...unlockShape }) };
      });
      break;
    case 'tls':
      await part('tls', async () => {
        result.tls = await runTls({
          stations: options.tlsStations,
          locks: options.locks,
          runs: options.runs,
          unlockStations: options.tlsUnlockStations,
          unlocks: options.tlsUnlocks,
          unlockSeconds: 60,
          stormSeconds: 180,
          stormIntervalMs: 200,
          log,
          verbose,
        });
      });
      break;
    case 'soak':
      await part('soak', async () => {
        result.soak = await runSoak({
          seconds: options.soakSeconds,
          rate: options.soakRate,
          stations: options.unlockStations,
          locks: options.locks,
          floodSeconds: options.floodSeconds,
          floodRate: options.floodRate,
          floodAddresses: options.floodAddresses,
          log,
          verbose,
        });
      });
      break;
    case 'profile':
      await part('profile', async () => {
        result.profile = await runProfile({
          broker: 'embedded',
          seconds: options.profileSeconds,
          keepAs: outPath.replace(/\.json$/, '') + '-api.cpuprofile',
          log,
          verbose,
        });
      });
      break;
    case 'reset':
      await part('reset', async () => {
        result.reset = await runReset({ samples: options.quick ? 8 : 20, log, verbose });
      });
      break;
  }
}

save();
process.stdout.write(renderMarkdown(result));
log(`wrote ${outPath} and ${outPath.replace(/\.json$/, '')}.md`);
process.exitCode = result.errors.length > 0 ? 1 : 0;
