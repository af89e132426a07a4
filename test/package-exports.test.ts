/**
 * What an installed package offers: the entry points in package.json's `exports`, imported by
 * name from the compiled `dist/` as a user's project would (Node resolves a package's own name
 * from inside it). The test builds `dist/` first, so it checks the sources of this checkout.
 */
import { execFileSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { expect, it } from 'vitest';

it('exports the simulator, the reference client and the API from station-sim, and each part from its own path', () => {
  execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'], { stdio: 'pipe' });
  const script = `
    const main = await import('station-sim');
    const client = await import('station-sim/client');
    const testing = await import('station-sim/testing');
    console.log(JSON.stringify({
      main: ['startSimulator', 'createClient', 'ApiError', 'startApi', 'buildApi', 'parseFixture'].filter((name) => typeof main[name] !== 'function'),
      client: ['createClient', 'ApiError', 'isApiError'].filter((name) => typeof client[name] !== 'function'),
      testing: ['startTestSimulator', 'withSimulator'].filter((name) => typeof testing[name] !== 'function'),
    }));`;
  const missing = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' })) as Record<string, string[]>;
  expect(missing).toEqual({ main: [], client: [], testing: [] });
}, 120_000);

it('gives the shipped fixtures and their schema by name, as the files in fixtures/', () => {
  const names = ['station-sim/fixture.schema.json', 'station-sim/fixtures/fixture.schema.json', 'station-sim/fixtures/ci.json', 'station-sim/fixtures/demo.json'];
  const script = `console.log(JSON.stringify(${JSON.stringify(names)}.map((name) => import.meta.resolve(name))))`;
  const resolved = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' })) as string[];
  const file = (path: string): string => new URL(path, pathToFileURL(`${process.cwd()}/`)).href;
  expect(resolved).toEqual([file('fixtures/fixture.schema.json'), file('fixtures/fixture.schema.json'), file('fixtures/ci.json'), file('fixtures/demo.json')]);
});
