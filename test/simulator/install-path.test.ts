/**
 * The bundled demo fixture is found from an install path with a space and a %-escape in it.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { copyCheckoutToOddPath, type OddPathCheckout } from '../helpers/odd-path-checkout.js';

let checkout: OddPathCheckout;
beforeAll(async () => {
  checkout = await copyCheckoutToOddPath();
});
afterAll(() => checkout.remove());

it('loads the bundled demo fixture when the package sits under a path with a space and a %-escape', () => {
  const module = pathToFileURL(join(checkout.root, 'src/simulator/resolve-fixture.ts')).href;
  const script = `
    const { resolveFixture } = await import(${JSON.stringify(module)});
    const fixture = await resolveFixture(undefined);
    console.log(JSON.stringify({ source: fixture.source, stations: fixture.stations.length }));`;
  const output = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
  const loaded = JSON.parse(output) as { source: string; stations: number };
  expect(loaded.source).toBe(join(checkout.root, 'fixtures/demo.json'));
  expect(loaded.stations).toBeGreaterThan(0);
});
