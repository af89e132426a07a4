/**
 * The fixtures the benchmarks run, as fixture data (validated by the product's own loader when
 * used). Pure, so the harness and its children build the same fleets from the same numbers.
 */

/** Email and password of the account the unlock benchmarks log in with. Not a secret: a fixture. */
export const BENCH_ACCOUNT = { email: 'bench@example.com', password: 'bench-password' } as const;

export interface BootFixtureOptions {
  stations: number;
  locksPerStation: number;
  /** Token pattern of the generated fleet. @default "B-{n}" */
  tokenPattern?: string;
  /** The fixture's `mqtt` section (docs/mqtt-security.md), e.g. `{ certs: DIR }`. @default none, or `benchMqttSection()` */
  mqtt?: object;
}

/**
 * `BENCH_BROKER_AUTH=1` (set by `npm run bench -- --broker-auth`, inherited by every child): the
 * bench fixtures ask the embedded broker to authenticate every connection and check its ACL
 * (`mqtt.broker.auth: true`, docs/mqtt-security.md, "The embedded broker, secured"), so boot and
 * unlock can be measured with the checks on. Without it the fixtures have no `mqtt` section and the
 * broker is open, as on loopback by default.
 */
export function benchMqttSection(): object | undefined {
  return process.env.BENCH_BROKER_AUTH === '1' ? { broker: { auth: true } } : undefined;
}

/** The tokens `bootFixture` generates: `B-{n}` zero-padded to the width of the count (docs/fixtures.md). */
export function bootTokens(stations: number): string[] {
  const width = String(stations).length;
  return Array.from({ length: stations }, (_, index) => `B-${String(index + 1).padStart(width, '0')}`);
}

/**
 * A fleet for boot figures: no heartbeat (so nothing but the boot itself runs), default delays,
 * no accounts.
 */
export function bootFixture(options: BootFixtureOptions): object {
  const mqtt = options.mqtt ?? benchMqttSection();
  return {
    ...(mqtt === undefined ? {} : { mqtt }),
    description: `bench: boot ${options.stations} stations x ${options.locksPerStation} locks`,
    defaults: { heartbeatMs: 0 },
    fleets: [{ count: options.stations, tokenPattern: options.tokenPattern ?? 'B-{n}', firstStationId: 1, locksPerStation: options.locksPerStation }],
  };
}

export interface UnlockFixtureOptions {
  stations: number;
  locksPerStation: number;
  /**
   * Time from `unlocked` back to `locked`; short so a lock is closed again long before the
   * rotation comes back to it. @default 50
   */
  relockMs?: number;
  /** The fixture's `mqtt` section. @default none, or `benchMqttSection()` */
  mqtt?: object;
  /** The fixture's `judge` section (docs/judge.md), e.g. `{ enabled: false }`. @default none: the judge on */
  judge?: object;
}

/**
 * A fleet for the unlock round trip: zero unlock delay, short relock, no heartbeat, no battery
 * drain (otherwise every station would drop below the cutoff after ~110 unlocks and start
 * rejecting with `low_battery`), and one account that may reach every station.
 */
export function unlockFixture(options: UnlockFixtureOptions): object {
  const tokens = unlockTokens(options.stations);
  const mqtt = options.mqtt ?? benchMqttSection();
  return {
    ...(mqtt === undefined ? {} : { mqtt }),
    ...(options.judge === undefined ? {} : { judge: options.judge }),
    description: `bench: unlock round trip over ${options.stations} stations x ${options.locksPerStation} locks`,
    defaults: {
      unlockDelayMs: 0,
      relockMs: options.relockMs ?? 50,
      heartbeatMs: 0,
      battery: { drainPerUnlockV: 0, drainPerHourV: 0 },
    },
    // A command that gets no ack within this time is a failure the benchmark must see, not wait out.
    api: { commandTimeoutMs: 5000 },
    accounts: [{ ...BENCH_ACCOUNT, stations: tokens }],
    fleets: [{ count: options.stations, tokenPattern: 'U-{n}', firstStationId: 1, locksPerStation: options.locksPerStation }],
  };
}

/** The tokens `unlockFixture` generates: `U-{n}` with `{n}` zero-padded to the width of the count (docs/fixtures.md). */
export function unlockTokens(stations: number): string[] {
  const width = String(stations).length;
  return Array.from({ length: stations }, (_, index) => `U-${String(index + 1).padStart(width, '0')}`);
}

/** One unlock target: a lock of a station. */
export interface UnlockTarget {
  token: string;
  lockId: string;
}

/**
 * Every lock of the unlock fleet, ordered so that consecutive requests go to different stations:
 * lock 1 of every station, then lock 2 of every station, and so on.
 */
export function unlockTargets(stations: number, locksPerStation: number): UnlockTarget[] {
  const tokens = unlockTokens(stations);
  const targets: UnlockTarget[] = [];
  for (let lock = 1; lock <= locksPerStation; lock += 1) for (const token of tokens) targets.push({ token, lockId: String(lock) });
  return targets;
}

/** The request path of an unlock. */
export function unlockPath(target: UnlockTarget): string {
  return `/v1/stations/${encodeURIComponent(target.token)}/locks/${encodeURIComponent(target.lockId)}/unlock`;
}
