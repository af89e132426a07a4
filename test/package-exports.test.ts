/**
 * What an installed package offers: the entry points in package.json's `exports`, imported by
 * name from the compiled `dist/` as a user's project would (Node resolves a package's own name
 * from inside it), and what `npm pack` puts in the package. The file builds this checkout's
 * sources into a copy of the package in a temporary folder, so `npm test` never rewrites the
 * working tree's `dist/` (which `bin/station-sim.js` and other processes may be running from).
 */
import { execFileSync } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';

/** The copy of the package: its manifest, sources, fixtures and bin, and the build of them. */
let packageDir = '';

beforeAll(async () => {
  packageDir = await mkdtemp(join(tmpdir(), 'station-sim-package-'));
  // With this checkout's dist/, which the suite's global setup brought up to date: the build is
  // incremental, so it checks the sources against that build and rewrites only what differs.
  for (const entry of ['package.json', 'tsconfig.json', 'tsconfig.build.json', 'LICENSE', 'README.md', 'CHANGELOG.md', 'docs', 'examples', 'bench', 'src', 'bin', 'fixtures', 'dist']) {
    await cp(entry, join(packageDir, entry), { recursive: true });
  }
  // The dependencies, for the compiler and for the imports of the built package.
  await symlink(join(process.cwd(), 'node_modules'), join(packageDir, 'node_modules'), 'dir');
  // tsc from the copy's node_modules, not the checkout's that it links to: its record names the
  // TypeScript libraries by their path from dist/, which must be the same in both to be reused.
  const tsc = join(packageDir, 'node_modules/typescript/bin/tsc');
  execFileSync(process.execPath, ['--preserve-symlinks', '--preserve-symlinks-main', tsc, '-p', 'tsconfig.build.json'], { cwd: packageDir, stdio: 'pipe' });
}, 120_000);

afterAll(async () => {
  if (packageDir) await rm(packageDir, { recursive: true, force: true });
});

/** Runs an ES module script with Node from inside the package copy, and parses what it prints. */
function runInPackage(script: string): unknown {
  return JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: packageDir, encoding: 'utf8' }));
}

it('exports the simulator, the reference client and the API from station-sim, and each part from its own path', () => {
  const script = `
    const main = await import('station-sim');
    const client = await import('station-sim/client');
    const testing = await import('station-sim/testing');
    console.log(JSON.stringify({
      main: ['startSimulator', 'createClient', 'ApiError', 'ApiUnreachableError', 'startApi', 'buildApi', 'parseFixture'].filter((name) => typeof main[name] !== 'function'),
      client: ['createClient', 'ApiError', 'ApiUnreachableError', 'isApiError'].filter((name) => typeof client[name] !== 'function'),
      testing: ['startTestSimulator', 'withSimulator', 'ApiError', 'ApiUnreachableError', 'ApiTimeoutError', 'ApiAbortedError', 'SimError'].filter((name) => typeof testing[name] !== 'function'),
      // One class across entry points: an error from one is an instanceof the class of the others.
      shared: ['ApiError', 'ApiUnreachableError', 'ApiTimeoutError', 'ApiAbortedError'].filter((name) => !(main[name] === client[name] && client[name] === testing[name]))
        .concat(main.SimError === testing.SimError ? [] : ['SimError']),
    }));`;
  expect(runInPackage(script)).toEqual({ main: [], client: [], testing: [], shared: [] });
});

it('gives the shipped fixtures, their schema and package.json by name, as the files they are', () => {
  const names = ['station-sim/fixture.schema.json', 'station-sim/fixtures/fixture.schema.json', 'station-sim/fixtures/ci.json', 'station-sim/fixtures/demo.json', 'station-sim/package.json'];
  const script = `console.log(JSON.stringify(${JSON.stringify(names)}.map((name) => import.meta.resolve(name))))`;
  const file = (path: string): string => new URL(path, pathToFileURL(`${packageDir}/`)).href;
  expect(runInPackage(script)).toEqual([
    file('fixtures/fixture.schema.json'),
    file('fixtures/fixture.schema.json'),
    file('fixtures/ci.json'),
    file('fixtures/demo.json'),
    file('package.json'),
  ]);
});

it('packs the licence and no dev-only script or build record, with source maps that carry their sources', async () => {
  // --ignore-scripts: the build before the tests stands for `prepare`.
  const [pack] = JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: packageDir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })) as [
    { files: { path: string }[] },
  ];
  const files = pack.files.map((entry) => entry.path);
  expect(files).toContain('LICENSE');
  // The README's links work in the package too: the docs it points to are packed with it.
  const readme = await readFile(join(packageDir, 'README.md'), 'utf8');
  const linked = [...readme.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)].map((match) => match[1]!).filter((target) => !/^[a-z]+:/i.test(target));
  expect(linked.length).toBeGreaterThan(0);
  for (const target of linked) expect(files, `README links ${target}`).toContain(target.replace(/^\.\//, ''));
  expect(files.filter((path) => path.includes('write-schema') || path.endsWith('.tsbuildinfo'))).toEqual([]);
  expect(files.some((path) => path.startsWith('src/'))).toBe(false);
  const maps = files.filter((path) => path.endsWith('.js.map'));
  expect(maps.length).toBeGreaterThan(0);
  for (const path of maps) {
    const map = JSON.parse(await readFile(join(packageDir, path), 'utf8')) as { sources: string[]; sourcesContent?: (string | null)[] };
    expect(map.sourcesContent?.length, path).toBe(map.sources.length);
    expect(map.sourcesContent?.every((content) => typeof content === 'string' && content.length > 0), path).toBe(true);
  }
});
