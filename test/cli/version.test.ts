/**
 * `station-sim --version` names station-sim's version, not that of the project it is installed in.
 */
import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { CONSUMER_VERSION, copyCheckoutToOddPath, type OddPathCheckout } from '../helpers/odd-path-checkout.js';

let checkout: OddPathCheckout;
beforeAll(async () => {
  checkout = await copyCheckoutToOddPath();
});
afterAll(() => checkout.remove());

it("prints station-sim's own version from inside another project, whose package.json has another one", async () => {
  const { version } = JSON.parse(await readFile('package.json', 'utf8')) as { version: string };
  // --preserve-symlinks keeps yargs at the other project's node_modules/yargs, where npm would have
  // put it: yargs looks for a package.json from there up when told no version.
  const output = execFileSync(process.execPath, ['--preserve-symlinks', '--import', 'tsx', join(checkout.root, 'src/cli/main.ts'), '--version'], {
    cwd: checkout.project,
    encoding: 'utf8',
  });
  expect(version).not.toBe(CONSUMER_VERSION);
  expect(output).toBe(`${version}\n`);
});
