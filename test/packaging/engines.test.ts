/**
 * The Node versions package.json claims (`engines`) are ones every dependency supports: an install
 * on any of them prints no `EBADENGINE`. cookie 2 (through fastify's light-my-request 6.8) asks for
 * Node 22, and yargs 18 for 20.19, while engines said >=20.6; every install on Node 20 warned.
 * Read from package-lock.json, which records each package's engines, so no network is needed.
 */
import { readFile } from 'node:fs/promises';
import semver from 'semver';
import { expect, it } from 'vitest';

interface LockEntry {
  version?: string;
  dev?: boolean;
  engines?: { node?: string } | string[];
}

it('every dependency a user installs supports every Node version engines claims', async () => {
  const manifest = JSON.parse(await readFile('package.json', 'utf8')) as { engines: { node: string } };
  const lock = JSON.parse(await readFile('package-lock.json', 'utf8')) as { packages: Record<string, LockEntry> };
  const claimed = manifest.engines.node;
  expect(semver.validRange(claimed)).not.toBeNull();
  const narrower = Object.entries(lock.packages)
    .filter(([path, entry]) => path !== '' && entry.dev !== true)
    .flatMap(([path, entry]) => {
      const node = Array.isArray(entry.engines) ? undefined : entry.engines?.node;
      return node !== undefined && !semver.subset(claimed, node) ? [`${path.replace(/^.*node_modules\//, '')}@${entry.version}: node ${node}`] : [];
    });
  expect(narrower, `engines claims node ${claimed}`).toEqual([]);
});

it('claims a Node 20 release: the README promises Node 20', async () => {
  const manifest = JSON.parse(await readFile('package.json', 'utf8')) as { engines: { node: string } };
  expect(semver.minVersion(manifest.engines.node)?.major).toBe(20);
  expect(semver.satisfies(process.version, manifest.engines.node)).toBe(true);
});
