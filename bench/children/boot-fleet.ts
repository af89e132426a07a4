/**
 * Benchmark child: boots a fleet of N stations × L locks with `startSimulator({ http: false })`
 * (what `station-sim stations` runs), with the embedded broker in this process or against
 * `--broker`. Ready data is a `FleetBootFigures`; `stop` stops the fleet and reports how long that took.
 * With `--certs DIR` (a folder made by `generateTestPki`) the fixture has `mqtt: { certs: DIR }`: every
 * station connects to an `mqtts://` broker with its own certificate (the `tls` part). `storm` samples
 * the online count while the harness restarts the broker (the reconnect storm).
 *
 *   (started by bench/boot.ts) boot-fleet.ts --stations 10000 --locks 4 [--broker mqtt://127.0.0.1:P] [--certs DIR]
 */
import { parseArgs } from 'node:util';
import type { StartedSimulator } from '../../src/simulator/start-simulator.js';
import type * as SimulatorModule from '../../src/simulator/start-simulator.js';
import type * as FixtureModule from '../../src/fixture/load-fixture.js';
import { importProduct } from '../lib/product.js';

const { startSimulator } = await importProduct<typeof SimulatorModule>('simulator/start-simulator');
const { parseFixture } = await importProduct<typeof FixtureModule>('fixture/load-fixture');
import type { StartedBroker } from '../../src/broker/embedded-broker.js';
import { bootFixture } from '../lib/fixtures.js';
import { collectGarbage, reportProgress, serveParent } from '../lib/ipc.js';
import { processMemory, type ProcessMemory } from '../lib/protocol.js';

/** What one boot measured. Times in ms, memory in bytes unless the name says otherwise. */
export interface FleetBootFigures {
  stations: number;
  locks: number;
  /** Validating the generated fixture (not part of `bootMs`). */
  fixtureMs: number;
  /** `startSimulator` until it resolved: every station connected, subscribed, retained state PUBACKed. */
  bootMs: number;
  online: number;
  /** Embedded broker only: retained messages found, expected N × (L + 1). */
  retained?: number;
  /** Embedded broker only: time after boot until the retained store held them all (aedes PUBACKs QoS 1 before storing). */
  retainedSettleMs?: number;
  /** Before the fixture was built, after a full GC. */
  before: ProcessMemory;
  /** After boot, after a full GC. */
  after: ProcessMemory;
}

const { values } = parseArgs({
  options: { stations: { type: 'string' }, locks: { type: 'string', default: '4' }, broker: { type: 'string' }, certs: { type: 'string' } },
});
const stations = Number(values.stations);
const locks = Number(values.locks);
let sim: StartedSimulator | undefined;

await serveParent(
  async (): Promise<FleetBootFigures> => {
    collectGarbage();
    const before = processMemory();
    let started = performance.now();
    const fixture = parseFixture(bootFixture({ stations, locksPerStation: locks, ...(values.certs ? { mqtt: { certs: values.certs } } : {}) }));
    const fixtureMs = performance.now() - started;
    let lastReport = 0;
    started = performance.now();
    sim = await startSimulator({
      fixture,
      http: false,
      ...(values.broker ? { broker: values.broker } : {}),
      onProgress: (ready, total) => {
        const now = performance.now();
        if (now - lastReport < 1000 && ready !== total) return;
        lastReport = now;
        reportProgress({ ready, total, elapsedMs: Math.round(now - started) });
      },
    });
    const bootMs = performance.now() - started;
    const online = sim.fleet.onlineCount();
    if (online !== stations) throw new Error(`only ${online} of ${stations} stations are online after boot`);
    const retainedFigures = sim.broker ? await waitForRetained(sim.broker, stations * (locks + 1)) : {};
    collectGarbage();
    // The broker's thread too: the raw baseline's broker shares its one thread, so its garbage goes in the GC above.
    await sim.broker?.threadHeapUsed?.({ collect: true });
    return { stations, locks, fixtureMs, bootMs, online, ...retainedFigures, before, after: processMemory() };
  },
  {
    methods: { storm: (params) => watchStorm(params as StormParams) },
    stop: async () => {
      const started = performance.now();
      await sim?.stop();
      return { stopMs: performance.now() - started, memory: processMemory() };
    },
  },
);

export interface StormParams {
  /** Between samples of the online count. */
  intervalMs: number;
  /** Give up this long after the call. */
  timeoutMs: number;
}

/** One sample: wall-clock time (`Date.now()`, comparable with the harness's) and stations online. */
export interface OnlineSample {
  at: number;
  online: number;
}

export interface StormSamples {
  samples: OnlineSample[];
  /** Whether the count fell below N and came back to N before the timeout. */
  allBack: boolean;
  stations: number;
}

/**
 * Samples `onlineCount()` every `intervalMs` from the call on, while the harness kills and restarts
 * the broker: until the count has fallen below N and is back at N, or `timeoutMs`. Bounded: at
 * most timeoutMs / intervalMs samples.
 */
async function watchStorm(params: StormParams): Promise<StormSamples> {
  if (!sim) throw new Error('no fleet');
  const fleet = sim.fleet;
  const samples: OnlineSample[] = [];
  const deadline = Date.now() + params.timeoutMs;
  let dropped = false;
  for (;;) {
    const online = fleet.onlineCount();
    samples.push({ at: Date.now(), online });
    if (online < stations) dropped = true;
    if (dropped && online === stations) return { samples, allBack: true, stations };
    if (Date.now() >= deadline) return { samples, allBack: false, stations };
    await new Promise((resolve) => setTimeout(resolve, params.intervalMs));
  }
}

/**
 * How many retained messages the embedded broker holds right after boot, and how long until it
 * holds `expected` (at most 10 s). aedes sends a QoS 1 PUBACK before it stores the message, so an
 * in-process station waits for the broker to finish that turn before it calls itself ready
 * (station-client.ts); this figure checks that boot is then honest (a few ms, the poll interval).
 */
async function waitForRetained(broker: StartedBroker, expected: number): Promise<{ retained: number; retainedSettleMs: number }> {
  const started = performance.now();
  let retained = await broker.retainedCount();
  while (retained < expected && performance.now() - started < 10_000) {
    await new Promise((resolve) => setTimeout(resolve, 5));
    retained = await broker.retainedCount();
  }
  return { retained, retainedSettleMs: performance.now() - started };
}
