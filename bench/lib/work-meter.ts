/**
 * Counts the work of a fixed number of unlocks in one process, for the hot-path budget guard
 * (test/bench/hot-path-budget.test.ts) and `npm run bench -- --only work`.
 *
 * Timed figures move 2× with the machine; counts do not. The simulator runs as `station-sim up`
 * runs it (auth, judge, request journal and control plane on, the fixture's defaults), with two
 * changes that make every count repeatable: the broker runs on the calling thread (its work is
 * counted too) and the clock is manual (ids, times and timers come out the same every run). The
 * unlocks go one at a time over a real TCP connection from a bare socket (no HTTP client whose own
 * work would be counted), each followed by the clock moving past the lock's relock, so a count
 * covers an unlock's whole story: request, command, ack, answer, `unlocked`, `locked`.
 *
 * What is counted, per unlock, after a warm-up of the same unlocks:
 * - `jsonParses`, `jsonSerialisations`: calls of `JSON.parse` and `JSON.stringify`;
 * - `isoDates`: `Date.prototype.toISOString` calls (every timestamp written);
 * - `mqttPublishes`: PUBLISH packets the broker receives from clients;
 * - `streamWrites`: `Writable.prototype.write` calls (MQTT packets on in-memory links, HTTP writes);
 * - `timers`: `setTimeout`/`setInterval` calls, on the global timers and the simulator's clock;
 * - `asyncResources`: promises, ticks, immediates and other async resources created (async_hooks);
 * - `heapBytes`: JS heap allocated (used heap growth plus what every GC freed, node:v8 GCProfiler):
 *   the one figure that moves a little between runs (JIT timing), so its budget has headroom.
 */
import { createHook } from 'node:async_hooks';
import { connect, type Socket } from 'node:net';
import { Duplex, Writable } from 'node:stream';
import { GCProfiler, getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { startSimulator, type StartedSimulator } from '../../src/simulator/start-simulator.js';
import type { InThreadBroker } from '../../src/broker/embedded-broker.js';

export interface WorkCounts {
  jsonParses: number;
  jsonSerialisations: number;
  isoDates: number;
  mqttPublishes: number;
  streamWrites: number;
  timers: number;
  asyncResources: number;
  heapBytes: number;
}

export const WORK_COUNT_NAMES: readonly (keyof WorkCounts)[] = [
  'jsonParses',
  'jsonSerialisations',
  'isoDates',
  'mqttPublishes',
  'streamWrites',
  'timers',
  'asyncResources',
  'heapBytes',
];

export interface WorkMeterOptions {
  /** Unlocks counted. @default 200 */
  unlocks?: number;
  /** Unlocks run before counting starts (JIT warm-up, caches filled). @default 100 */
  warmup?: number;
  /** Stations of the fleet (4 locks each). @default 100 */
  stations?: number;
  /** The fixture's `judge` section, e.g. `{ enabled: false }` to see what the judge costs. @default the judge on */
  judge?: object;
}

export interface WorkMeasurement {
  unlocks: number;
  /** The counts over all the counted unlocks. */
  totals: WorkCounts;
  /** CPU time of the process per unlock, µs (user + system), the counting wrappers off: timed, so not budgeted. */
  cpuMicros: number;
  /** Per unlock. */
  perUnlock: WorkCounts;
}

const ACCOUNT = { email: 'meter@example.com', password: 'meter-password' };
const LOCKS = ['1', '2', '3', '4'];

/** The fixture: the shipped defaults but for one account reaching every station, no heartbeat and no battery drain. */
function meterFixture(stations: number, judge?: object): object {
  return {
    ...(judge === undefined ? {} : { judge }),
    description: 'hot-path work meter',
    seed: 7,
    defaults: { heartbeatMs: 0, battery: { drainPerUnlockV: 0, drainPerHourV: 0 } },
    // Each unlock moves the manual clock past its relock (6 s): one token must outlast the run.
    api: { accessTokenTtlSeconds: 365 * 24 * 3600 },
    fleets: [{ count: stations, tokenPattern: 'W-{n}', firstStationId: 1, locksPerStation: LOCKS.length }],
    accounts: [{ email: ACCOUNT.email, password: ACCOUNT.password, stations: meterTokens(stations) }],
  };
}

function meterTokens(stations: number): string[] {
  const width = String(stations).length;
  return Array.from({ length: stations }, (_, index) => `W-${String(index + 1).padStart(width, '0')}`);
}

/** One HTTP/1.1 keep-alive connection written to by hand: the client side adds almost nothing to the counts. */
class BareHttp {
  readonly #socket: Socket;
  #buffer = '';
  #waiting: ((response: { status: number; body: string }) => void) | undefined;

  private constructor(socket: Socket) {
    this.#socket = socket;
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      this.#buffer += chunk;
      this.#drain();
    });
  }

  static async open(url: string): Promise<BareHttp> {
    const { hostname, port } = new URL(url);
    const socket = connect({ host: hostname, port: Number(port) });
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    return new BareHttp(socket);
  }

  request(head: string, body = ''): Promise<{ status: number; body: string }> {
    return new Promise((resolve) => {
      this.#waiting = resolve;
      this.#socket.write(head + (body ? `content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}` : 'content-length: 0\r\n\r\n'));
    });
  }

  #drain(): void {
    const end = this.#buffer.indexOf('\r\n\r\n');
    if (end < 0) return;
    const head = this.#buffer.slice(0, end);
    const length = Number(/content-length: *(\d+)/i.exec(head)?.[1] ?? '0');
    if (this.#buffer.length < end + 4 + length) return;
    const body = this.#buffer.slice(end + 4, end + 4 + length);
    this.#buffer = this.#buffer.slice(end + 4 + length);
    const status = Number(head.slice(9, 12));
    const waiting = this.#waiting;
    this.#waiting = undefined;
    waiting?.({ status, body });
  }

  close(): void {
    this.#socket.destroy();
  }
}

/** Swaps counting wrappers into the globals for the length of `body`; they always go back. */
class Counters {
  readonly counts: WorkCounts = { jsonParses: 0, jsonSerialisations: 0, isoDates: 0, mqttPublishes: 0, streamWrites: 0, timers: 0, asyncResources: 0, heapBytes: 0 };
  #on = false;
  readonly #undo: (() => void)[] = [];

  install(sim: StartedSimulator): void {
    const counts = this.counts;
    const wrap = <T extends object, K extends keyof T>(target: T, key: K, count: () => void): void => {
      const original = target[key] as unknown as (...args: unknown[]) => unknown;
      const self = this;
      target[key] = function (this: unknown, ...args: unknown[]) {
        if (self.#on) count();
        return original.apply(this, args);
      } as unknown as T[K];
      this.#undo.push(() => {
        target[key] = original as unknown as T[K];
      });
    };
    wrap(JSON, 'parse', () => (counts.jsonParses += 1));
    wrap(JSON, 'stringify', () => (counts.jsonSerialisations += 1));
    wrap(Date.prototype, 'toISOString', () => (counts.isoDates += 1));
    wrap(Writable.prototype, 'write', () => (counts.streamWrites += 1));
    // Duplex copies Writable's methods onto its own prototype (sockets and in-memory links are Duplexes).
    wrap(Duplex.prototype, 'write', () => (counts.streamWrites += 1));
    wrap(globalThis, 'setTimeout', () => (counts.timers += 1));
    wrap(globalThis, 'setInterval', () => (counts.timers += 1));
    wrap(sim.clock, 'setTimeout', () => (counts.timers += 1));
    const hook = createHook({
      init: () => {
        if (this.#on) counts.asyncResources += 1;
      },
    }).enable();
    this.#undo.push(() => hook.disable());
    const aedes = (sim.broker as InThreadBroker | undefined)?.aedes;
    if (!aedes) throw new Error('the work meter needs the embedded broker on the calling thread');
    const onPublish = (_packet: unknown, client: unknown): void => {
      if (this.#on && client) counts.mqttPublishes += 1;
    };
    aedes.on('publish', onPublish);
    this.#undo.push(() => aedes.removeListener('publish', onPublish));
  }

  start(): void {
    this.#on = true;
  }

  stop(): void {
    this.#on = false;
  }

  uninstall(): void {
    this.#on = false;
    for (const undo of this.#undo.splice(0).reverse()) undo();
  }
}

/** Runs `warmup` then `unlocks` sequential unlocks and returns the counts of the latter, per unlock. */
export async function measureUnlockWork(options: WorkMeterOptions = {}): Promise<WorkMeasurement> {
  const unlocks = options.unlocks ?? 200;
  const warmup = options.warmup ?? 100;
  const stations = options.stations ?? 100;
  const sim = await startSimulator({
    fixture: meterFixture(stations, options.judge),
    clock: 'manual',
    brokerThread: false,
    httpPort: 0,
    mqttPort: 0,
    fallbackToFreePort: false,
  });
  const counters = new Counters();
  const http = await BareHttp.open(sim.apiUrl);
  try {
    const login = await http.request(`POST /v1/auth/login HTTP/1.1\r\nhost: meter\r\ncontent-type: application/json\r\n`, JSON.stringify(ACCOUNT));
    if (login.status !== 200) throw new Error(`login answered ${login.status}`);
    const token = (JSON.parse(login.body) as { accessToken: string }).accessToken;
    const longest = (delay: number | { max: number }): number => (typeof delay === 'number' ? delay : delay.max);
    const relockMs = Math.max(...sim.fixture.stations.map((station) => longest(station.behaviour.relockMs) + longest(station.behaviour.unlockDelayMs)));
    const tokens = sim.fixture.stations.map((station) => station.token);
    let next = 0;
    const unlockOne = async (): Promise<void> => {
      const index = next++;
      const station = tokens[Math.floor(index / LOCKS.length) % tokens.length]!;
      const lockId = LOCKS[index % LOCKS.length]!;
      const answer = await http.request(`POST /v1/stations/${station}/locks/${lockId}/unlock HTTP/1.1\r\nhost: meter\r\nauthorization: Bearer ${token}\r\n`);
      if (answer.status !== 200 || !answer.body.includes('"success":true')) throw new Error(`unlock ${station}/${lockId} answered ${answer.status} ${answer.body}`);
      // Past the unlock delay and the relock: the lock's story ends before the next unlock.
      await sim.clock.advance(relockMs + 1);
    };
    for (let i = 0; i < warmup; i += 1) await unlockOne();
    const cpuStart = process.cpuUsage();
    for (let i = 0; i < unlocks; i += 1) await unlockOne();
    const cpu = process.cpuUsage(cpuStart);
    counters.install(sim);
    const profiler = new GCProfiler();
    const heapBefore = getHeapStatistics().used_heap_size;
    profiler.start();
    counters.start();
    for (let i = 0; i < unlocks; i += 1) await unlockOne();
    counters.stop();
    const heapAfter = getHeapStatistics().used_heap_size;
    const profile = profiler.stop();
    let freed = 0;
    for (const stat of profile?.statistics ?? []) freed += Math.max(0, stat.beforeGC.heapStatistics.usedHeapSize - stat.afterGC.heapStatistics.usedHeapSize);
    counters.counts.heapBytes = heapAfter - heapBefore + freed;
    const perUnlock = Object.fromEntries(WORK_COUNT_NAMES.map((name) => [name, counters.counts[name] / unlocks])) as unknown as WorkCounts;
    return { unlocks, totals: { ...counters.counts }, cpuMicros: (cpu.user + cpu.system) / unlocks, perUnlock };
  } finally {
    counters.uninstall();
    http.close();
    await sim.stop();
  }
}

/**
 * JS heap held per idle station: `stations` stations × 4 locks booted as `station-sim stations`
 * boots them (fleet, control agent, judge; the embedded broker on the calling thread, its sessions
 * included), heap in use after a full GC, less the same before, over the count. Needs a `gc`
 * (`--expose-gc`, or `exposeGc()` below).
 */
export async function measureStationHeap(stations = 1000): Promise<number> {
  const gc = exposeGc();
  const fixture = { description: 'station heap meter', seed: 7, defaults: { heartbeatMs: 0 }, fleets: [{ count: stations, tokenPattern: 'H-{n}', firstStationId: 1, locksPerStation: LOCKS.length }] };
  gc();
  const before = getHeapStatistics().used_heap_size;
  const sim = await startSimulator({ fixture, http: false, brokerThread: false, mqttPort: 0, fallbackToFreePort: false });
  try {
    gc();
    return (getHeapStatistics().used_heap_size - before) / stations;
  } finally {
    await sim.stop();
  }
}

/** `globalThis.gc`, turning the flag on when the process was started without it. */
export function exposeGc(): () => void {
  const existing = (globalThis as { gc?: () => void }).gc;
  if (existing) return existing;
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}
