/**
 * The notice bin/station-sim.js prints when the sources changed after the build it runs.
 */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { staleBuildNotice } from '../../src/cli/stale-build.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A package directory with src/station/model.ts and dist/cli/main.js at the given times (s). */
function checkout(sourceAt: number, builtAt: number): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'stale-build-'));
  dirs.push(dir);
  mkdirSync(path.join(dir, 'src', 'station'), { recursive: true });
  mkdirSync(path.join(dir, 'dist', 'cli'), { recursive: true });
  const source = path.join(dir, 'src', 'station', 'model.ts');
  const built = path.join(dir, 'dist', 'cli', 'main.js');
  writeFileSync(source, 'export {};\n');
  writeFileSync(built, 'export {};\n');
  utimesSync(source, sourceAt, sourceAt);
  utimesSync(built, builtAt, builtAt);
  return dir;
}

describe('staleBuildNotice', () => {
  it('says to build when a source file, however deep, is newer than the compiled CLI', () => {
    const notice = staleBuildNotice(checkout(2_000_000, 1_000_000));
    expect(notice).toContain('src/ changed after dist/ was built');
    expect(notice).toContain('npm run build');
  });

  it('says nothing when the build is newer, and takes a file: URL as bin does', () => {
    const dir = checkout(1_000_000, 2_000_000);
    expect(staleBuildNotice(dir)).toBeUndefined();
    expect(staleBuildNotice(pathToFileURL(`${dir}/`))).toBeUndefined();
  });

  it('takes the time of the last build from its record: an incremental build rewrites only the outputs that changed', () => {
    const dir = checkout(2_000_000, 1_000_000);
    const record = path.join(dir, 'dist', '.tsbuildinfo');
    writeFileSync(record, '{}\n');
    utimesSync(record, 3_000_000, 3_000_000);
    expect(staleBuildNotice(dir)).toBeUndefined();
    utimesSync(record, 1_500_000, 1_500_000);
    expect(staleBuildNotice(dir)).toContain('src/ changed after dist/ was built');
  });

  it('says nothing in an installed package, which has no src/', () => {
    const dir = checkout(2_000_000, 1_000_000);
    rmSync(path.join(dir, 'src'), { recursive: true });
    expect(staleBuildNotice(dir)).toBeUndefined();
  });
});

describe('bin/station-sim.js', () => {
  it('says to build, and still runs, when dist/ predates the check (no stale-build.js): a checkout pulled without a rebuild', () => {
    const dir = checkout(1_000_000, 2_000_000);
    mkdirSync(path.join(dir, 'bin'));
    copyFileSync(new URL('../../bin/station-sim.js', import.meta.url), path.join(dir, 'bin', 'station-sim.js'));
    writeFileSync(path.join(dir, 'package.json'), '{"type":"module"}\n');
    writeFileSync(path.join(dir, 'dist', 'cli', 'main.js'), "process.stdout.write('old cli ran\\n');\n");
    const result = spawnSync(process.execPath, [path.join(dir, 'bin', 'station-sim.js')], { encoding: 'utf8' });
    expect(result.status).toBe(0);
    expect(result.stdout).toBe('old cli ran\n');
    expect(result.stderr).toBe('station-sim: dist/ is older than src/ (it predates this check), and this command runs dist/: run `npm run build`\n');
  });
});
