/**
 * The harness's command line, parsed and defaulted in one place. Pure (argv in, options out), so
 * `test/bench/args.test.ts` can check it.
 */
import { parseArgs } from 'node:util';

export const PARTS = ['boot', 'up', 'unlock', 'judge', 'judge-cost', 'mosquitto', 'tls', 'soak', 'profile', 'reset'] as const;
export type Part = (typeof PARTS)[number];
/** What runs without `--only`: everything but `judge-cost`, which starts two fresh pairs of simulators per round (a quarter of an hour). */
export const DEFAULT_PARTS: readonly Part[] = PARTS.filter((part) => part !== 'judge-cost');

export interface BenchOptions {
  /** Shorter everything: 1 run, no 100,000-station fleet, 2 s loads, a 20 s soak. @default false */
  quick: boolean;
  /** Parts to run, in this order. @default boot, unlock, mosquitto, soak, profile */
  parts: Part[];
  /** Runs of each measurement; figures are medians. @default 3 (quick: 1) */
  runs: number;
  /** Runs of fleets of 100,000 stations or more (minutes each). @default 1 */
  bigRuns: number;
  /** Fleet sizes of the boot figures. @default 1000, 10000, 100000 (quick: 1000, 10000) */
  sizes: number[];
  /** Locks per station. @default 4 */
  locks: number;
  /** Connection counts of the unlock load. @default 1, 10, 100 */
  connections: number[];
  /** Seconds of each unlock and hello-world measurement. @default 5 (quick: 2) */
  durationSeconds: number;
  /** Seconds of warm-up load before each run's measurements. @default 2 (quick: 1) */
  warmupSeconds: number;
  /** Seconds at the start of each unlock and hello-world load that are not measured (the connections' ramp). @default 1 */
  rampSeconds: number;
  /** Stations of the unlock fleet (× `locks` locks). @default 1000 */
  unlockStations: number;
  /** Rounds of the judge part, each the judge on once and off once. @default 8 (quick: 4) */
  judgeRounds: number;
  /** HTTP connections of the judge part's unlock load. @default 10 */
  judgeConnections: number;
  /** Unlocks per second of the judge part's load. @default 300 */
  judgeRate: number;
  /** Seconds of each measurement of the judge part. @default 10 (quick: 5) */
  judgeSeconds: number;
  /** The judge part's A/A control: both simulators with the judge on. @default false */
  judgeAa: boolean;
  /** How `judge-cost` loads the two sides of a pair: at the same time, or one after the other. @default together */
  judgeLoading: 'together' | 'apart';
  /** Stations of the `up` part (`station-sim up` beside a fleet boot of the same size). @default 100000 (quick: 10000) */
  upStations: number;
  /** Run src/ under tsx instead of the compiled dist/ that `station-sim` runs. @default false */
  source: boolean;
  /** Length of the soak. @default 300 (quick: 20) */
  soakSeconds: number;
  /** Unlocks per second during the soak. @default 200 */
  soakRate: number;
  /** Seconds of unlock load beside each login flood after the soak; 0 leaves them out. @default 60 (quick: 10) */
  floodSeconds: number;
  /** Wrong logins per second of each flood. @default 43 */
  floodRate: number;
  /** Source addresses of the flood phases, one phase each. @default 1, 64 */
  floodAddresses: number[];
  /** Seconds of load while the API is profiled. @default 10 */
  profileSeconds: number;
  /** Stations of the TLS boot, its raw baseline and the reconnect storm. @default 10000 (quick: 1000) */
  tlsStations: number;
  /** Stations of the TLS part's unlock fleet. @default 100 */
  tlsUnlockStations: number;
  /** Sequential unlocks per broker and run in the TLS part. @default 300 (quick: 100) */
  tlsUnlocks: number;
  /** The embedded broker authenticates and checks its ACL (`mqtt.broker.auth: true` in the bench fixtures). @default false */
  brokerAuth: boolean;
  /** Where the JSON goes; the markdown table goes next to it (`.md`). @default bench/results/<date>[-quick].json */
  out: string | undefined;
  /** Copy the children's output to stderr. @default false */
  verbose: boolean;
  help: boolean;
}

export const USAGE = `Usage: npm run bench -- [options]

  --quick               quick run: 1 run, fleets of 1,000 and 10,000, 2 s loads, 20 s soak
  --only LIST           parts to run, comma-separated: ${PARTS.join(', ')} (default: ${DEFAULT_PARTS.join(',')})
  --runs N              runs per measurement, figures are medians (default 3, quick 1)
  --big-runs N          runs of the 100,000-station fleets (default 1)
  --sizes LIST          fleet sizes for boot (default 1000,10000,100000; quick 1000,10000)
  --locks N             locks per station (default 4)
  --connections LIST    HTTP connections of the unlock load (default 1,10,100)
  --duration S          seconds per unlock / hello-world measurement (default 5, quick 2)
  --warmup S            seconds of warm-up load per run (default 2, quick 1)
  --ramp S              unmeasured seconds at the start of each unlock / hello-world load (default 1)
  --unlock-stations N   stations of the unlock fleet (default 1000)
  --judge-rounds N      rounds of the judge part, each the judge on and off (default 8, quick 4)
  --judge-connections N HTTP connections of the judge part's load (default 10)
  --judge-rate R        unlocks per second of the judge part's load (default 300)
  --judge-seconds S     seconds per judge on / off measurement (default 10, quick 5)
  --judge-aa            A/A control of the judge part: both simulators with the judge on
  --judge-loading HOW   judge-cost: load a pair's two sides together (default) or apart, one after the other
  --up-stations N       stations of the up part: station-sim up (ci fixture grown to N) beside a fleet boot of N (default 100000, quick 10000)
  --soak-seconds S      soak length (default 300, quick 20)
  --soak-rate R         unlocks per second during the soak (default 200)
  --flood-seconds S     unlock load beside each login flood after the soak; 0: none (default 60, quick 10)
  --flood-rate R        wrong logins per second of each flood (default 43)
  --flood-addresses L   source addresses of the flood phases, one phase each, 1 to 250 (default 1,64)
  --profile-seconds S   seconds of load while profiling the API (default 10)
  --tls-stations N      stations of the tls part's boot, baseline and reconnect storm (default 10000, quick 1000)
  --tls-unlock-stations N  stations of the tls part's unlock fleet (default 100)
  --tls-unlocks N       sequential unlocks per broker and run in the tls part (default 300, quick 100)
  --broker-auth         the embedded broker authenticates and checks its ACL (fixtures get mqtt.broker.auth: true)
  --source              run src/ under tsx rather than the compiled dist/ the station-sim command runs (built first)
  --out FILE            JSON output (default bench/results/<date>.json; markdown next to it)
  --verbose             show the children's output
  --help                this text
`;

/** Parses the harness's arguments; throws an Error with a one-line message on a bad one. */
export function parseBenchArgs(argv: string[]): BenchOptions {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      quick: { type: 'boolean', default: false },
      only: { type: 'string' },
      runs: { type: 'string' },
      'big-runs': { type: 'string' },
      sizes: { type: 'string' },
      locks: { type: 'string' },
      connections: { type: 'string' },
      duration: { type: 'string' },
      warmup: { type: 'string' },
      ramp: { type: 'string' },
      'unlock-stations': { type: 'string' },
      'judge-rounds': { type: 'string' },
      'judge-connections': { type: 'string' },
      'judge-rate': { type: 'string' },
      'judge-seconds': { type: 'string' },
      'judge-aa': { type: 'boolean', default: false },
      'judge-loading': { type: 'string' },
      'up-stations': { type: 'string' },
      'soak-seconds': { type: 'string' },
      'soak-rate': { type: 'string' },
      'flood-seconds': { type: 'string' },
      'flood-rate': { type: 'string' },
      'flood-addresses': { type: 'string' },
      'profile-seconds': { type: 'string' },
      'tls-stations': { type: 'string' },
      'tls-unlock-stations': { type: 'string' },
      'tls-unlocks': { type: 'string' },
      'broker-auth': { type: 'boolean', default: false },
      source: { type: 'boolean', default: false },
      out: { type: 'string' },
      verbose: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  const quick = values.quick ?? false;
  return {
    quick,
    parts: values.only === undefined ? [...DEFAULT_PARTS] : parseParts(values.only),
    runs: positiveInteger('--runs', values.runs, quick ? 1 : 3),
    bigRuns: positiveInteger('--big-runs', values['big-runs'], 1),
    sizes: integerList('--sizes', values.sizes, quick ? [1000, 10_000] : [1000, 10_000, 100_000]),
    locks: positiveInteger('--locks', values.locks, 4),
    connections: integerList('--connections', values.connections, [1, 10, 100]),
    durationSeconds: positiveNumber('--duration', values.duration, quick ? 2 : 5),
    warmupSeconds: nonNegativeNumber('--warmup', values.warmup, quick ? 1 : 2),
    rampSeconds: nonNegativeNumber('--ramp', values.ramp, 1),
    unlockStations: positiveInteger('--unlock-stations', values['unlock-stations'], 1000),
    judgeRounds: positiveInteger('--judge-rounds', values['judge-rounds'], quick ? 4 : 8),
    judgeConnections: positiveInteger('--judge-connections', values['judge-connections'], 10),
    judgeRate: positiveNumber('--judge-rate', values['judge-rate'], 300),
    judgeSeconds: positiveNumber('--judge-seconds', values['judge-seconds'], quick ? 5 : 10),
    judgeAa: values['judge-aa'] ?? false,
    judgeLoading: judgeLoading(values['judge-loading']),
    upStations: positiveInteger('--up-stations', values['up-stations'], quick ? 10_000 : 100_000),
    soakSeconds: positiveNumber('--soak-seconds', values['soak-seconds'], quick ? 20 : 300),
    soakRate: positiveNumber('--soak-rate', values['soak-rate'], 200),
    floodSeconds: nonNegativeNumber('--flood-seconds', values['flood-seconds'], quick ? 10 : 60),
    floodRate: positiveNumber('--flood-rate', values['flood-rate'], 43),
    floodAddresses: floodAddresses(values['flood-addresses']),
    profileSeconds: positiveNumber('--profile-seconds', values['profile-seconds'], 10),
    tlsStations: positiveInteger('--tls-stations', values['tls-stations'], quick ? 1000 : 10_000),
    tlsUnlockStations: positiveInteger('--tls-unlock-stations', values['tls-unlock-stations'], 100),
    tlsUnlocks: positiveInteger('--tls-unlocks', values['tls-unlocks'], quick ? 100 : 300),
    brokerAuth: values['broker-auth'] ?? false,
    source: values.source ?? false,
    out: values.out,
    verbose: values.verbose ?? false,
    help: values.help ?? false,
  };
}

/** The default output path for a run started at `date`. */
export function defaultOutPath(date: Date, quick: boolean): string {
  return `bench/results/${date.toISOString().slice(0, 10)}${quick ? '-quick' : ''}.json`;
}

function parseParts(text: string): Part[] {
  const parts = text.split(',').map((part) => part.trim()).filter(Boolean);
  const unknown = parts.filter((part) => !(PARTS as readonly string[]).includes(part));
  if (unknown.length > 0) throw new Error(`--only: unknown part ${unknown.join(', ')} (known: ${PARTS.join(', ')})`);
  if (parts.length === 0) throw new Error('--only: name at least one part');
  // Run in the documented order whatever order they were named in.
  return PARTS.filter((part) => parts.includes(part));
}

function positiveInteger(flag: string, text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${flag}: expected a whole number of at least 1, got "${text}"`);
  return value;
}

function positiveNumber(flag: string, text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!(value > 0) || !Number.isFinite(value)) throw new Error(`${flag}: expected a number above 0, got "${text}"`);
  return value;
}

function nonNegativeNumber(flag: string, text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!(value >= 0) || !Number.isFinite(value)) throw new Error(`${flag}: expected a number of at least 0, got "${text}"`);
  return value;
}

function integerList(flag: string, text: string | undefined, fallback: number[]): number[] {
  if (text === undefined) return fallback;
  return text.split(',').map((item) => positiveInteger(flag, item.trim().replace(/_/g, ''), 0));
}

/** Source address counts of the flood phases: loopback 127.0.0.2 onwards, so at most 250. */
function floodAddresses(text: string | undefined): number[] {
  const counts = integerList('--flood-addresses', text, [1, 64]);
  if (counts.some((count) => count > 250)) throw new Error('--flood-addresses takes counts from 1 to 250 (loopback 127.0.0.2 onwards)');
  return counts;
}

function judgeLoading(value: string | undefined): 'together' | 'apart' {
  if (value === undefined || value === 'together' || value === 'apart') return value ?? 'together';
  throw new Error(`--judge-loading must be together or apart, not ${JSON.stringify(value)}`);
}
