/**
 * What an installed package offers: the entry points in package.json's `exports`, imported by
 * name from the compiled `dist/` as a user's project would (Node resolves a package's own name
 * from inside it), and what `npm pack` puts in the package. The file builds `dist/` first, so it
 * checks the sources of this checkout.
 */
import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';
import { beforeAll, expect, it } from 'vitest';

beforeAll(() => {
  execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'], { stdio: 'pipe' });
}, 120_000);

it('exports the simulator, the reference client and the API from station-sim, and each part from its own path', () => {
  const script = `
    const main = await import('station-sim');
    const client = await import('station-sim/client');
    const testing = await import('station-sim/testing');
    console.log(JSON.stringify({
      main: ['startSimulator', 'createClient', 'ApiError', 'ApiUnreachableError', 'startApi', 'buildApi', 'parseFixture'].filter((name) => typeof main[name] !== 'function'),
      client: ['createClient', 'ApiError', 'ApiUnreachableError', 'isApiError'].filter((name) => typeof client[name] !== 'function'),
      testing: ['startTestSimulator', 'withSimulator'].filter((name) => typeof testing[name] !== 'function'),
    }));`;
  const missing = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' })) as Record<string, string[]>;
  expect(missing).toEqual({ main: [], client: [], testing: [] });
});

it('gives the shipped fixtures, their schema and package.json by name, as the files they are', () => {
  const names = ['station-sim/fixture.schema.json', 'station-sim/fixtures/fixture.schema.json', 'station-sim/fixtures/ci.json', 'station-sim/fixtures/demo.json', 'station-sim/package.json'];
  const script = `console.log(JSON.stringify(${JSON.stringify(names)}.map((name) => import.meta.resolve(name))))`;
  const resolved = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' })) as string[];
  const file = (path: string): string => new URL(path, pathToFileURL(`${process.cwd()}/`)).href;
  expect(resolved).toEqual([
    file('fixtures/fixture.schema.json'),
    file('fixtures/fixture.schema.json'),
    file('fixtures/ci.json'),
    file('fixtures/demo.json'),
    file('package.json'),
  ]);
});

it('packs the licence and no dev-only script, with source maps that carry their sources', async () => {
  // --ignore-scripts: the build before the tests stands for `prepare`.
  const [pack] = JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })) as [
    { files: { path: string }[] },
  ];
  const files = pack.files.map((entry) => entry.path);
  expect(files).toContain('LICENSE');
  expect(files.filter((path) => path.includes('write-schema'))).toEqual([]);
  expect(files.some((path) => path.startsWith('src/'))).toBe(false);
  const maps = files.filter((path) => path.endsWith('.js.map'));
  expect(maps.length).toBeGreaterThan(0);
  for (const path of maps) {
    const map = JSON.parse(await readFile(path, 'utf8')) as { sources: string[]; sourcesContent?: (string | null)[] };
    expect(map.sourcesContent?.length, path).toBe(map.sources.length);
    expect(map.sourcesContent?.every((content) => typeof content === 'string' && content.length > 0), path).toBe(true);
  }
});
