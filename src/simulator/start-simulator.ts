/**
 * The whole simulator in one call (DESIGN.md rule 4): the embedded broker (or an external one),
 * the fleet, and the `/v1` API. This is the library entry point for test suites and what
 * `station-sim up` runs.
 */
import { startEmbeddedBroker, type StartedBroker } from '../broker/embedded-broker.js';
import { startFleet, type StartedFleet } from '../fleet/start-fleet.js';
import { loadFixture, parseFixture } from '../fixture/load-fixture.js';
import type { Fixture } from '../fixture/fixture-schema.js';
import type { MqttTransport } from '../mqtt/transport.js';
import { redactUrl } from '../mqtt/transport.js';
import { systemClock, type Clock } from '../station/clock.js';

export interface SimulatorOptions {
  /** A fixture file path, fixture data, or a fixture already loaded. @default the bundled demo fixture */
  fixture?: string | Fixture | object;
  /** Overrides the fixture's seed. */
  seed?: number;
  /** URL of an external broker (`mqtt://host:port`); when set, no broker is embedded and stations use TCP. */
  broker?: string;
  /** Port of the embedded broker; 0 picks a free one. @default 0 */
  mqttPort?: number;
  /** Port of the HTTP API; 0 picks a free one. @default 0 */
  httpPort?: number;
  /** Interface the servers bind to. @default "127.0.0.1" */
  host?: string;
  /** When a requested port is taken, use a free one instead of failing. @default false */
  fallbackToFreePort?: boolean;
  /** @default systemClock */
  clock?: Clock;
  /** Called as stations come up. */
  onProgress?: (ready: number, total: number) => void;
}

/** A running simulator; `stop()` shuts every part down and leaves no handle open. */
export interface StartedSimulator {
  readonly fixture: Fixture;
  readonly seed: number;
  /** Where MQTT clients connect (credentials, if any, removed). */
  readonly mqttUrl: string;
  readonly fleet: StartedFleet;
  /** The embedded broker, when there is one. */
  readonly broker: StartedBroker | undefined;
  stop(): Promise<void>;
}

export const DEMO_FIXTURE = new URL('../../fixtures/demo.json', import.meta.url).pathname;

export async function resolveFixture(fixture: SimulatorOptions['fixture']): Promise<Fixture> {
  if (fixture === undefined) return loadFixture(DEMO_FIXTURE);
  if (typeof fixture === 'string') return loadFixture(fixture);
  if (isLoaded(fixture)) return fixture;
  return parseFixture(fixture);
}

function isLoaded(value: object): value is Fixture {
  return 'source' in value && 'api' in value && Array.isArray((value as Fixture).stations);
}

export async function startSimulator(options: SimulatorOptions = {}): Promise<StartedSimulator> {
  const fixture = await resolveFixture(options.fixture);
  const seed = options.seed ?? fixture.seed;
  const host = options.host ?? '127.0.0.1';
  const cleanups: (() => Promise<void>)[] = [];
  const stopAll = async (): Promise<void> => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  };
  try {
    let broker: StartedBroker | undefined;
    let transport: MqttTransport;
    let mqttUrl: string;
    if (options.broker) {
      transport = { kind: 'tcp', url: options.broker };
      mqttUrl = redactUrl(options.broker);
    } else {
      broker = await startEmbeddedBroker({ port: options.mqttPort ?? 0, host, fallbackToFreePort: options.fallbackToFreePort ?? false });
      cleanups.push(() => broker!.stop());
      transport = { kind: 'memory', broker };
      mqttUrl = broker.url;
    }
    const fleet = await startFleet({
      stations: fixture.stations,
      transport,
      seed,
      clock: options.clock ?? systemClock,
      ...(options.onProgress ? { onProgress: options.onProgress } : {}),
    });
    cleanups.push(() => fleet.stop());
    return { fixture, seed, mqttUrl, fleet, broker, stop: stopAll };
  } catch (error) {
    await stopAll();
    throw error;
  }
}
