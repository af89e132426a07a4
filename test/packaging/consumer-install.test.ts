/**
 * station-sim as a new user gets it, in projects of their own outside this repository: installed
 * from a tarball made by `npm pack` and from a git URL (the README's two ways while the package is
 * not on the registry), then used by a vitest suite, a Jest suite in CommonJS and a node:test
 * suite, alone and under `station-sim run`, each checking `instanceof` across the entry points
 * (`station-sim`, `station-sim/client`, `station-sim/testing`) in CommonJS and ES modules. The
 * suites are the shipped examples (examples/), run from the installed package; the README's
 * background snippet runs as written.
 *
 * The package is this working tree as it is: its files (tracked and new, not ignored) are
 * committed to a repository in a temporary folder, which is packed and cloned bare for the git
 * URL. The machine may reach the npm registry only, so the git URL is a local one
 * (`git+file://…`); the README shows the github form. Installs use the npm cache
 * (`--prefer-offline`); the git install builds the package (`prepare`) with all of its
 * devDependencies, so this file takes minutes, most of it that install.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = process.cwd();
const INSTALL_FLAGS = ['--prefer-offline', '--no-audit', '--no-fund'];

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * The environment of every command here: this run's own, without npm's variables (under `npm test`
 * they would make each npm below act as part of this package's `test` script, and the CLI take
 * itself for one started by npm).
 */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name) && !name.startsWith('STATION_SIM_')));
  return { ...env, NO_COLOR: '1', FORCE_COLOR: '0', ...extra };
}

function run(command: string, args: string[], cwd: string, options: { timeoutMs?: number; env?: Record<string, string> } = {}): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env: cleanEnv(options.env), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 120_000);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Runs and expects exit 0, showing the output when it is not. */
async function ok(command: string, args: string[], cwd: string, options: { timeoutMs?: number; env?: Record<string, string> } = {}): Promise<Ran> {
  const ran = await run(command, args, cwd, options);
  if (ran.code !== 0) throw new Error(`${command} ${args.join(' ')} (in ${cwd}) exited with ${ran.code}\n${ran.stdout}\n${ran.stderr}`);
  return ran;
}

let work = '';
/** The consumer that installed the tarball (with vitest and Jest), and the one that installed the git URL. */
let fromTarball = '';
let fromGit = '';
const installs: Record<'tarball' | 'git', Ran | undefined> = { tarball: undefined, git: undefined };

/** Commits the working tree's files (tracked and new, not ignored) to a repository of its own. */
async function snapshot(to: string): Promise<void> {
  const listed = (await ok('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], ROOT)).stdout.split('\0').filter(Boolean);
  for (const file of listed) {
    if (!existsSync(join(ROOT, file))) continue; // tracked, deleted in the working tree
    await mkdir(dirname(join(to, file)), { recursive: true });
    await copyFile(join(ROOT, file), join(to, file));
  }
  const git = ['-c', 'user.name=station-sim test', '-c', 'user.email=test@station-sim.invalid', '-c', 'commit.gpgsign=false'];
  await ok('git', ['init', '-q'], to);
  await ok('git', ['add', '-A'], to);
  await ok('git', [...git, 'commit', '-q', '-m', 'the working tree, for the consumer tests'], to);
}

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'station-sim-consumers-'));
  const source = join(work, 'station-sim');
  await snapshot(source);
  const bare = join(work, 'station-sim.git');
  await ok('git', ['clone', '-q', '--bare', source, bare], work);
  // The build before packing (`prepare`) needs the devDependencies: this checkout's, not committed.
  await symlink(join(ROOT, 'node_modules'), join(source, 'node_modules'), 'dir');
  const packed = await ok('npm', ['pack', '--json', '--pack-destination', work], source, { timeoutMs: 300_000 });
  const [{ filename }] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as [{ filename: string }];

  const version = async (name: string): Promise<string> => (JSON.parse(await readFile(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
  fromTarball = join(work, 'from-tarball');
  fromGit = join(work, 'from-git');
  await mkdir(fromTarball);
  await mkdir(fromGit);
  await writeFile(
    join(fromTarball, 'package.json'),
    JSON.stringify(
      {
        name: 'consumer-from-tarball',
        private: true,
        // What the README's background snippet runs: a stand-in for a suite that reads API_URL.
        scripts: { 'test:e2e': `node -e "fetch(process.env.API_URL + '/v1/openapi.json').then((r) => { if (!r.ok) process.exit(1); console.log('e2e against', process.env.API_URL) })"` },
        jest: { testEnvironment: 'node' },
        devDependencies: { vitest: await version('vitest'), jest: await version('jest') },
      },
      null,
      2,
    ),
  );
  await writeFile(join(fromGit, 'package.json'), JSON.stringify({ name: 'consumer-from-git', private: true }, null, 2));
  // The README's commands, side by side: the git install builds the package, which takes longest.
  [installs.tarball, installs.git] = await Promise.all([
    run('npm', ['install', '--save-dev', ...INSTALL_FLAGS, join(work, filename)], fromTarball, { timeoutMs: 400_000 }),
    run('npm', ['install', '--save-dev', ...INSTALL_FLAGS, `git+${pathToFileURL(bare).href}`], fromGit, { timeoutMs: 400_000 }),
  ]);
  for (const [how, ran] of Object.entries(installs)) {
    if (ran?.code !== 0) throw new Error(`npm install from the ${how} exited with ${ran?.code}\n${ran?.stdout}\n${ran?.stderr}`);
  }
  // The examples, copied from the installed package into the project, as a user starts from them.
  await cp(join(fromTarball, 'node_modules/station-sim/examples'), join(fromTarball, 'examples'), { recursive: true });
  await cp(join(fromGit, 'node_modules/station-sim/examples'), join(fromGit, 'examples'), { recursive: true });
  for (const dir of [fromTarball, fromGit]) {
    await writeFile(join(dir, 'entries.cjs'), ENTRIES_CJS);
    await writeFile(join(dir, 'entries.mjs'), ENTRIES_MJS);
  }
}, 900_000);

afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

/** One class per name across the entry points, and an error of one an instanceof the others' class. */
const ENTRIES_CHECK = `
  const same = (name, ...parts) => parts.every((part) => typeof part[name] === 'function' && part[name] === parts[0][name]);
  const thrown = new testing.ApiError(404, 'Station not found');
  console.log(JSON.stringify({
    classes: ['ApiError', 'ApiUnreachableError', 'ApiTimeoutError', 'ApiAbortedError'].filter((name) => !same(name, main, client, testing))
      .concat(same('SimError', main, testing) ? [] : ['SimError'], same('ControlClient', client, testing) ? [] : ['ControlClient']),
    instanceOf: [thrown instanceof main.ApiError, thrown instanceof client.ApiError, main.isApiError(new client.ApiError(500, 'x'), 500)],
  }));`;
const ENTRIES_CJS = `const main = require('station-sim');\nconst client = require('station-sim/client');\nconst testing = require('station-sim/testing');\n${ENTRIES_CHECK}\n`;
const ENTRIES_MJS = `import * as main from 'station-sim';\nimport * as client from 'station-sim/client';\nimport * as testing from 'station-sim/testing';\n${ENTRIES_CHECK}\n`;
const ONE_OF_EACH = { classes: [], instanceOf: [true, true, true] };

describe('installed from a tarball made by npm pack', () => {
  it('installs with no EBADENGINE warning on this Node', () => {
    expect(`${installs.tarball?.stdout}${installs.tarball?.stderr}`).not.toContain('EBADENGINE');
  });

  it('gives one class per name across the entry points, in CommonJS and in ES modules', async () => {
    expect(JSON.parse((await ok(process.execPath, ['entries.cjs'], fromTarball)).stdout)).toEqual(ONE_OF_EACH);
    expect(JSON.parse((await ok(process.execPath, ['entries.mjs'], fromTarball)).stdout)).toEqual(ONE_OF_EACH);
  }, 180_000);

  it('runs the shipped vitest example', async () => {
    const ran = await ok('npx', ['vitest', 'run', 'examples/unlock.example.test.ts'], fromTarball);
    expect(ran.stdout).toMatch(/Tests\s+6 passed \(6\)/);
  }, 180_000);

  it('runs the shipped Jest example, in CommonJS', async () => {
    const ran = await ok('npx', ['jest', '--ci', 'examples/unlock.jest.test.cjs'], fromTarball);
    expect(ran.stderr).toMatch(/Tests:\s+3 passed, 3 total/);
  }, 180_000);

  it('runs the shipped node:test example', async () => {
    const ran = await ok(process.execPath, ['--test', 'examples/unlock.node-test.test.mjs'], fromTarball);
    expect(ran.stdout).toMatch(/# pass 3\n# fail 0/);
  }, 180_000);

  it('runs the vitest example under station-sim run, attached to the simulator run started', async () => {
    const ran = await ok('npx', ['station-sim', 'run', '--fixture', 'ci', '--', 'npx', 'vitest', 'run', '--no-file-parallelism', 'examples/unlock.example.test.ts'], fromTarball);
    expect(ran.stderr).toMatch(/station-sim: attached to the simulator at http:\/\/127\.0\.0\.1:\d+ \(STATION_SIM_API_URL\)/);
    expect(ran.stdout).toMatch(/Tests\s+6 passed \(6\)/);
  }, 180_000);

  it("runs the README's background snippet as written, under bash -e: exit 0, the ready file gone, the signal named", async () => {
    const readme = await readFile(join(ROOT, 'README.md'), 'utf8');
    const block = /In the background, for a suite that starts its own way[\s\S]*?```sh\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(block, 'the README has the background snippet').toBeDefined();
    await writeFile(join(fromTarball, 'background.sh'), `set -e\n${block}echo "background snippet: exit $?"\n`);
    const ran = await ok('bash', ['background.sh'], fromTarball);
    expect(ran.stdout).toContain('e2e against http://127.0.0.1:');
    expect(ran.stdout).toContain('background snippet: exit 0');
    expect(ran.stderr).toContain('station-sim: SIGTERM received, shutting down');
    expect(existsSync(join(fromTarball, 'sim.json'))).toBe(false);
  }, 180_000);

  it('runs the command by name: fixture validate takes the shipped fixture', async () => {
    expect((await ok('npx', ['station-sim', 'fixture', 'validate', 'ci'], fromTarball)).stdout).toBe('ci: valid (25 stations, 2 accounts)\n');
  }, 180_000);
});

describe('installed from a git URL', () => {
  it('builds the package on install (prepare), with no EBADENGINE warning', () => {
    expect(`${installs.git?.stdout}${installs.git?.stderr}`).not.toContain('EBADENGINE');
    for (const built of ['dist/index.js', 'dist/cjs/station-sim.cjs', 'dist/testing/index.d.ts']) expect(existsSync(join(fromGit, 'node_modules/station-sim', built)), built).toBe(true);
  });

  it('gives one class per name across the entry points, in CommonJS and in ES modules', async () => {
    expect(JSON.parse((await ok(process.execPath, ['entries.cjs'], fromGit)).stdout)).toEqual(ONE_OF_EACH);
    expect(JSON.parse((await ok(process.execPath, ['entries.mjs'], fromGit)).stdout)).toEqual(ONE_OF_EACH);
  }, 180_000);

  it('runs the shipped node:test example, alone and under station-sim run', async () => {
    expect((await ok(process.execPath, ['--test', 'examples/unlock.node-test.test.mjs'], fromGit)).stdout).toMatch(/# pass 3\n# fail 0/);
    const ran = await ok('npx', ['station-sim', 'run', '--fixture', 'ci', '--', process.execPath, '--test', 'examples/unlock.node-test.test.mjs'], fromGit);
    expect(ran.stdout).toMatch(/# pass 3\n# fail 0/);
    // node --test passes on what a test file writes to stderr as comments of its report.
    expect(`${ran.stdout}${ran.stderr}`).toContain('station-sim: attached to the simulator at');
  }, 180_000);
});
