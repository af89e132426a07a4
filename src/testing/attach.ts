/**
 * Attach or own: whether a test helper uses the simulator named in its environment (as
 * `station-sim run` sets it) or starts one of its own. Firebase's SDKs follow `*_EMULATOR_HOST` the
 * same way. The helper attaches only when the simulator there can give what the suite asked for:
 * the same fixture, the same kind of clock, and no option that only a simulator of its own can have
 * (a seed, ports, a transcript file…). Otherwise it starts its own, and its one line says why.
 */
import { ControlClient } from '../client/control-client.js';
import type { Fixture } from '../fixture/fixture-schema.js';
import type { SimulatorOptions } from '../simulator/start-simulator.js';
import { SIMULATOR_ENV } from '../simulator/simulator-env.js';

/** The variables `station-sim run` sets for the command it runs (src/cli/commands/run/). */
export const ATTACH_ENV = SIMULATOR_ENV;

/**
 * Options an attached helper can honour: it checks the fixture and the clock against the
 * simulator, and talks to it with the control token. Every other simulator option (a seed, ports,
 * a broker, `record`…) describes how to build a simulator, so only one of the helper's own has it.
 */
const ATTACHABLE_OPTIONS: ReadonlySet<string> = new Set(['fixture', 'clock', 'controlToken', 'onNotice', 'onProgress']);

/** Where a simulator to attach to is, read from the environment. */
export interface AttachTarget {
  apiUrl: string;
  controlUrl: string;
  mqttUrl: string | undefined;
  controlToken: string | undefined;
}

/** The simulator in the environment, or undefined when `STATION_SIM_API_URL` is not set. */
export function attachTarget(env: NodeJS.ProcessEnv, controlToken: string | undefined): AttachTarget | undefined {
  const apiUrl = nonEmpty(env[ATTACH_ENV.apiUrl])?.replace(/\/+$/, '');
  if (apiUrl === undefined) return undefined;
  return {
    apiUrl,
    controlUrl: nonEmpty(env[ATTACH_ENV.controlUrl])?.replace(/\/+$/, '') ?? `${apiUrl}/sim/v1`,
    mqttUrl: nonEmpty(env[ATTACH_ENV.mqttUrl]),
    controlToken: controlToken ?? nonEmpty(env[ATTACH_ENV.controlToken]),
  };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

/** The simulator options that keep a helper from attaching, by name. */
export function ownOnlyOptions(options: SimulatorOptions): string[] {
  return Object.entries(options)
    // A clock object of the caller's own cannot be checked against another process.
    .filter(([key, value]) => value !== undefined && (!ATTACHABLE_OPTIONS.has(key) || (key === 'clock' && typeof value !== 'string')))
    .map(([key]) => key);
}

/**
 * Why the simulator at `target` cannot stand in for one started with `fixture` and `clock`, or
 * undefined when it can. Costs two or three small requests. A simulator that cannot be reached, or
 * refuses the control token, is an error, not a reason to start another: the environment says the
 * suite runs against it.
 */
export async function mismatch(control: ControlClient, target: AttachTarget, fixture: Fixture, clock: SimulatorOptions['clock']): Promise<string | undefined> {
  let health;
  try {
    health = await control.health();
  } catch (error) {
    const status = (error as { status?: unknown }).status;
    if (status === 401) {
      throw new Error(
        `${ATTACH_ENV.apiUrl} names a simulator at ${target.apiUrl}, whose control plane ${target.controlToken === undefined ? 'needs a control token' : 'refused the control token'}: ` +
          `set ${ATTACH_ENV.controlToken} or pass controlToken to the helper.`,
        { cause: error },
      );
    }
    const what = status === 0 || status === undefined ? 'does not answer' : `answers ${String(status)}`;
    throw new Error(
      `${ATTACH_ENV.apiUrl} names a simulator at ${target.apiUrl}, but its control plane ${what}: ${(error as Error).message}. ` +
        'Start it (station-sim run), unset the variable, or pass attach: false.',
      { cause: error },
    );
  }
  const first = fixture.stations[0];
  if (health.stations.total !== fixture.stations.length) {
    return `it runs another fixture (${health.stations.total} stations, not the ${fixture.stations.length} of ${fixture.source})`;
  }
  if (first !== undefined) {
    try {
      await control.station(first.token);
    } catch (error) {
      if ((error as { status?: unknown }).status === 404) return `it runs another fixture (no station ${first.token}, the first of ${fixture.source})`;
      throw error;
    }
  }
  if (clock === 'manual' || clock === 'system') {
    const { manual } = await control.simulatorClock();
    if (manual !== (clock === 'manual')) return `its clock is ${manual ? 'manual' : 'the system clock'}, not ${clock === 'manual' ? 'manual' : 'the system clock'}`;
  }
  return undefined;
}
