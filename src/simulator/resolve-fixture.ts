/**
 * The fixture the `fixture` option names, loaded and checked: apart from startSimulator so that the
 * commands that only read a fixture (`fixture validate`, `contract asyncapi`, `broker`,
 * `transcript judge --fixture`) do not load the HTTP server, the broker and the fleet with it.
 */
import { fileURLToPath } from 'node:url';
import { loadFixture, parseFixture } from '../fixture/load-fixture.js';
import type { Fixture } from '../fixture/fixture-schema.js';
import { SimError } from '../errors.js';
import { FIXTURE_WANTS, isFixtureOption, shown, SHIPPED_FIXTURES, type ShippedFixtureName, type SimulatorOptions } from './simulator-options.js';

/** The absolute path of a shipped fixture, in `src/` and `dist/` alike (both are two levels down). */
export function shippedFixturePath(name: ShippedFixtureName): string {
  // fileURLToPath, not `.pathname`: the URL's path keeps a space as %20, and no file has that name.
  return fileURLToPath(new URL(`../../fixtures/${name}.json`, import.meta.url));
}

export const DEMO_FIXTURE = shippedFixturePath('demo');

function isShippedFixtureName(value: string): value is ShippedFixtureName {
  return (SHIPPED_FIXTURES as readonly string[]).includes(value);
}

/** The fixture the `fixture` option names: a shipped one by name, a file by path, or data. */
export async function resolveFixture(fixture: SimulatorOptions['fixture']): Promise<Fixture> {
  if (fixture === undefined) return loadFixture(DEMO_FIXTURE);
  if (!isFixtureOption(fixture)) throw new SimError('BAD_REQUEST', `fixture must be ${FIXTURE_WANTS}, not ${shown(fixture)}`);
  if (typeof fixture === 'string') return loadFixture(isShippedFixtureName(fixture) ? shippedFixturePath(fixture) : fixture);
  if (isLoaded(fixture)) return fixture;
  return parseFixture(fixture);
}

function isLoaded(value: object): value is Fixture {
  return 'source' in value && 'api' in value && Array.isArray((value as Fixture).stations);
}
