/**
 * Faults of the `/v1` API itself (docs/control-plane.md, "API faults"): which requests they take,
 * by route and station, by count and seeded probability. What a fault does to the request is
 * api-fault-hook.ts; this is the list and the decisions, with no HTTP in it.
 *
 * Each fault draws from its own seeded stream, numbered in the order faults were added since the
 * last clear: the same seed and the same faults added in the same order give the same decisions,
 * whatever other faults see.
 */
import { STATUS_CODES } from 'node:http';
import { SimError } from '../errors.js';
import { seededRandom, type Random } from '../station/random.js';
import type { ApiFault, ApiFaultSpec } from './wire-schemas.js';

/** Mixed into the run's seed, so API faults never draw from a station's stream. */
const API_FAULT_SEED_SALT = 0x5a17_c3e9;
/** Probabilities are decided to a millionth. */
const PROBABILITY_STEPS = 1_000_000;

/** The messages of the interface where it has one for the status (interface section 7), else the status's name. */
const STANDARD_MESSAGES: Readonly<Record<number, string>> = {
  401: 'Token is invalid',
  404: 'Station not found',
  500: 'Internal server error',
};

export function standardMessage(status: number): string {
  return STANDARD_MESSAGES[status] ?? STATUS_CODES[status] ?? `HTTP ${status}`;
}

export interface ApiFaultsOptions {
  /** The run's seed. */
  seed: number;
  /** The routes a fault may name, `METHOD /v1/pattern`. */
  routes: () => readonly string[];
}

interface Entry {
  fault: ApiFault;
  random: Random;
}

export class ApiFaults {
  readonly #seed: number;
  readonly #routes: () => readonly string[];
  #entries: Entry[] = [];
  #nextId = 1;
  /** The stream the next fault draws from; back to 0 on clear, so a reset replays. */
  #stream = 0;

  constructor(options: ApiFaultsOptions) {
    this.#seed = options.seed;
    this.#routes = options.routes;
  }

  get size(): number {
    return this.#entries.length;
  }

  /** Checks a spec beyond its schema (route exists, fields fit the kind) and adds it. */
  add(spec: ApiFaultSpec): ApiFault {
    const route = spec.route === undefined ? undefined : this.#checkRoute(spec.route);
    checkFields(spec, route);
    const fault: ApiFault = {
      id: `api-${this.#nextId}`,
      ...spec,
      ...(route === undefined ? {} : { route }),
      ...(spec.kind === 'status' && spec.message === undefined ? { message: standardMessage(spec.status!) } : {}),
      remaining: spec.count ?? null,
    };
    this.#nextId += 1;
    this.#entries.push({ fault, random: seededRandom((this.#seed ^ API_FAULT_SEED_SALT) | 0, this.#stream) });
    this.#stream += 1;
    return { ...fault };
  }

  list(): ApiFault[] {
    return this.#entries.map((entry) => ({ ...entry.fault }));
  }

  remove(id: string): boolean {
    const before = this.#entries.length;
    this.#entries = this.#entries.filter((entry) => entry.fault.id !== id);
    return this.#entries.length < before;
  }

  /** Removes every fault; the next one added draws from the first stream again. Returns how many went. */
  clear(): number {
    const cleared = this.#entries.length;
    this.#entries = [];
    this.#stream = 0;
    return cleared;
  }

  /**
   * The fault that acts on this request, if any: the first, in the order added, that matches it and
   * whose probability says yes. Its count goes down, and it is removed at 0. Every matching fault
   * with a probability below 1 draws once per request it is asked about, up to the one that acts.
   */
  take(method: string, route: string, token: string | undefined): ApiFault | undefined {
    const name = `${method} ${route}`;
    for (const entry of this.#entries) {
      const { fault } = entry;
      if (fault.route !== undefined && fault.route !== name) continue;
      if (fault.token !== undefined && fault.token !== token) continue;
      const probability = fault.probability ?? 1;
      if (probability < 1 && entry.random.int(0, PROBABILITY_STEPS - 1) >= probability * PROBABILITY_STEPS) continue;
      if (fault.remaining !== null) {
        fault.remaining -= 1;
        if (fault.remaining === 0) this.remove(fault.id);
      }
      return { ...fault };
    }
    return undefined;
  }

  #checkRoute(route: string): string {
    // The method in any case; the pattern exactly as api.request shows it.
    const normal = route.replace(/^\S+/, (method) => method.toUpperCase());
    const routes = this.#routes();
    if (!routes.includes(normal)) {
      throw new SimError('BAD_REQUEST', `route must be a /v1 route as api.request events show it, one of: ${routes.join(', ')}; not ${JSON.stringify(route.slice(0, 100))}`);
    }
    return normal;
  }
}

/** The fields each kind needs and takes. */
function checkFields(spec: ApiFaultSpec, route: string | undefined): void {
  const refuse = (message: string): never => {
    throw new SimError('BAD_REQUEST', message);
  };
  if (spec.kind === 'status' && spec.status === undefined) refuse('a fault of kind "status" needs status (400 to 599)');
  if (spec.kind !== 'status') {
    for (const field of ['status', 'message', 'retryAfterSeconds'] as const) {
      if (spec[field] !== undefined) refuse(`${field} applies to kind "status" only, not "${spec.kind}"`);
    }
  }
  if (spec.kind === 'latency' && spec.latencyMs === undefined) refuse('a fault of kind "latency" needs latencyMs');
  if (spec.kind !== 'latency' && spec.latencyMs !== undefined) refuse(`latencyMs applies to kind "latency" only, not "${spec.kind}"`);
  if (spec.token !== undefined && route !== undefined && !route.includes(':station_token')) {
    refuse(`route ${route} has no station: a fault with token would never match it`);
  }
}
