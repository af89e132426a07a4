/**
 * The `reset` part: how long `POST /sim/v1/reset` takes between tests (issue 18, item 3), for the
 * `ci` fixture and for a fleet of 10,000 stations, each as a ratio to one `GET /sim/v1/health`
 * round trip measured in the same process, so that a busy machine moves both alike. Two resets are
 * measured: after nothing changed, and after one station was changed (its battery set), which is
 * the usual case between two tests. The simulator runs in its own child, as `station-sim up` runs it.
 *
 *   npm run bench -- --only reset
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startChild } from './lib/child.js';
import { bootFixture } from './lib/fixtures.js';
import { median, round } from './lib/stats.js';

export interface ResetRow {
  fixture: string;
  stations: number;
  /** Median round trip of `GET /sim/v1/health`: the baseline. */
  healthMs: number;
  /** Median `POST /sim/v1/reset` after nothing changed. */
  resetMs: number;
  /** Median `POST /sim/v1/reset` after one station's battery was set. */
  touchedResetMs: number;
  resetRatio: number;
  touchedResetRatio: number;
  samples: number;
}

export interface ResetResult {
  rows: ResetRow[];
}

export interface ResetOptions {
  /** Resets measured per fleet size (each kind); fewer for 10,000 stations. @default 20 (quick: 8) */
  samples: number;
  log: (line: string) => void;
  verbose?: boolean;
}

const CI_FIXTURE = fileURLToPath(new URL('../fixtures/ci.json', import.meta.url));
const BIG_FLEET = 10_000;

export async function runReset(options: ResetOptions): Promise<ResetResult> {
  const dir = mkdtempSync(path.join(tmpdir(), 'station-sim-bench-reset-'));
  try {
    const big = path.join(dir, 'reset-10000.json');
    // Two locks each and a heartbeat, as a test fleet has; one account so the fixture is usable.
    writeFileSync(big, JSON.stringify({ ...bootFixture({ stations: BIG_FLEET, locksPerStation: 2 }), defaults: { heartbeatMs: 60_000 } }));
    const rows: ResetRow[] = [];
    rows.push(await measure('ci', CI_FIXTURE, 'CI-1', options.samples, options));
    rows.push(await measure(`${BIG_FLEET.toLocaleString('en')} stations x 2 locks`, big, 'B-00001', Math.max(5, Math.round(options.samples / 2)), options));
    return { rows };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function measure(name: string, fixture: string, touchToken: string, samples: number, options: ResetOptions): Promise<ResetRow> {
  const child = startChild<{ apiUrl: string }>({ script: 'simulator.ts', args: ['--fixture', fixture], readyTimeoutMs: 180_000, label: `reset ${name}`, echo: options.verbose ?? false });
  try {
    const { apiUrl } = await child.ready;
    const control = `${apiUrl}/sim/v1`;
    const timed = async (method: string, route: string, body?: unknown): Promise<number> => {
      const started = performance.now();
      const response = await fetch(`${control}${route}`, {
        method,
        ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
      });
      await response.arrayBuffer();
      const ms = performance.now() - started;
      if (!response.ok) throw new Error(`${method} ${route}: HTTP ${response.status}`);
      return ms;
    };
    // Ready: every station up (bounded: 3 minutes).
    for (let waited = 0; ; waited += 200) {
      if ((await fetch(`${control}/health`)).ok) break;
      if (waited > 180_000) throw new Error(`${name}: not ready after 3 minutes`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    for (let i = 0; i < 3; i += 1) {
      await timed('GET', '/health');
      await timed('POST', '/reset');
    }
    const health: number[] = [];
    const reset: number[] = [];
    const touched: number[] = [];
    // Interleaved, so a machine that gets busier affects the baseline and the resets alike.
    for (let i = 0; i < samples; i += 1) {
      for (let j = 0; j < 3; j += 1) health.push(await timed('GET', '/health'));
      reset.push(await timed('POST', '/reset'));
      await timed('POST', `/stations/${touchToken}/battery`, { voltage: 11.9 });
      touched.push(await timed('POST', '/reset'));
    }
    const healthMs = median(health);
    const row: ResetRow = {
      fixture: name,
      stations: name === 'ci' ? 25 : BIG_FLEET,
      healthMs: round(healthMs, 2),
      resetMs: round(median(reset), 2),
      touchedResetMs: round(median(touched), 2),
      resetRatio: round(median(reset) / healthMs, 1),
      touchedResetRatio: round(median(touched) / healthMs, 1),
      samples,
    };
    options.log(`reset ${name}: ${row.resetMs} ms (${row.resetRatio}x health), after one change ${row.touchedResetMs} ms (${row.touchedResetRatio}x); health ${row.healthMs} ms`);
    return row;
  } finally {
    await child.stop(30_000);
  }
}
