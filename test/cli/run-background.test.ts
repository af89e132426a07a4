/**
 * `station-sim run --ready-file F &` then `kill`: the documented way to run the simulator in the
 * background stops cleanly (exit 0, ports released, the file gone), and the file exists exactly
 * while the simulator is ready. Real processes: signals and ports are what is tested.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_MAIN, CliProcess } from '../helpers/cli-process.js';
import { eventually } from '../helpers/eventually.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'station-sim-bg-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

interface Addresses {
  apiUrl: string;
  mqttUrl: string;
  controlUrl: string;
  seed: number;
  pid: number;
}

/** Waits for the ready file to hold the addresses; fails at once if `exited()` says the process ended. */
async function readyAddresses(file: string, exited: () => string | undefined): Promise<Addresses> {
  return eventually(
    async () => {
      const addresses = JSON.parse(await readFile(file, 'utf8')) as Addresses;
      expect(addresses.apiUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      return addresses;
    },
    { what: 'the ready file', timeout: 60_000, interval: 25, failIf: exited },
  );
}

/** Whether something accepts TCP connections on the port of `url`. */
function accepts(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port) });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Kills what is left of a process group (gone already is fine). */
function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // ESRCH: every process of the group has exited.
  }
}

/** Each test starts a CLI (one under npm) on a loaded 2-core machine: seconds each. */
describe('run --ready-file in the background', () => {
  it('removes a stale file before it is ready, writes the addresses, and stops on SIGTERM with 0, its ports free and the file gone', async () => {
    const file = join(dir, 'sim.json');
    await writeFile(file, '{"apiUrl":"http://127.0.0.1:1","stale":true}\n');
    const cli = new CliProcess(['run', '--fixture', 'fixtures/ci.json', '--seed', '5', '--ready-file', file]);
    const exited = (): string | undefined => (cli.child.exitCode === null ? undefined : `the CLI exited with ${cli.child.exitCode}: ${cli.stderr}`);
    // Gone while the CLI has not said it is ready: the stale file never looks like this run's.
    await eventually(
      () => {
        const ready = cli.stderr.includes('ready');
        if (existsSync(file) || ready) throw new Error(ready ? 'ready before the stale file was seen gone' : 'the stale file is still there');
      },
      { what: 'the stale file to go', timeout: 30_000, interval: 5, failIf: () => exited() ?? (cli.stderr.includes('ready') ? 'ready before the stale file was seen gone' : undefined) },
    );
    const addresses = await readyAddresses(file, exited);
    expect(addresses).toMatchObject({ seed: 5, controlUrl: `${addresses.apiUrl}/sim/v1`, pid: cli.child.pid });
    expect(addresses.mqttUrl).toMatch(/^mqtt:\/\/127\.0\.0\.1:\d+$/);
    // One line for the CI log, with the addresses (it may follow the file by a moment).
    await eventually(
      () =>
        expect(cli.stderr).toContain(
          `station-sim run: ready · API ${addresses.apiUrl} · MQTT ${addresses.mqttUrl} · control ${addresses.controlUrl} · seed 5\n`,
        ),
      { what: 'the ready line on stderr', timeout: 10_000, failIf: exited },
    );
    const health = await fetch(`${addresses.controlUrl}/health`);
    expect(await health.json()).toMatchObject({ ready: true });
    const login = await fetch(`${addresses.apiUrl}/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'nobody@example.com', password: 'wrong' }),
    });
    expect(login.status).toBe(401);

    expect(await cli.signal('SIGTERM')).toBe(0);
    expect(existsSync(file)).toBe(false);
    expect(await accepts(addresses.apiUrl)).toBe(false);
    expect(await accepts(addresses.mqttUrl)).toBe(false);
   }, 90_000);

  it('a SIGTERM while the simulator starts stops it once it is up: 143, no ready file, the command never runs', async () => {
    const file = join(dir, 'early.json');
    await writeFile(file, '{"stale":true}\n');
    const cli = new CliProcess(['run', '--fixture', 'fixtures/ci.json', '--ready-file', file, '--', process.execPath, '-e', 'console.log("RAN")']);
    // The stale file goes once the signal handlers are in place, before the fleet starts (seconds).
    await eventually(() => expect(existsSync(file)).toBe(false), { what: 'the stale file to go', timeout: 60_000, interval: 5 });
    expect(await cli.signal('SIGTERM')).toBe(143);
    expect(cli.stderr).toContain('SIGTERM received while starting');
    expect(cli.stdout).not.toContain('RAN');
    expect(existsSync(file)).toBe(false);
  }, 90_000);

  it('under npm (npx: npm → sh -c → node), stops cleanly when the shell dies of the SIGTERM npm passed on', async () => {
    const file = join(dir, 'npx.json');
    // `; exit` keeps the shell a parent, as dash running npm's `sh -c` is.
    const shell = spawn('sh', ['-c', `"${process.execPath}" "${CLI_MAIN}" run --fixture fixtures/ci.json --ready-file "${file}"; exit $?`], {
      cwd: fileURLToPath(new URL('../..', import.meta.url)),
      env: { ...process.env, npm_lifecycle_event: 'npx' },
      stdio: ['ignore', 'ignore', 'pipe'],
      // A process group of its own, so that a CLI that failed to stop is killed with it at the end.
      detached: true,
    });
    const shellExited = new Promise<void>((resolve) => shell.once('exit', () => resolve()));
    let stderr = '';
    shell.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    try {
      const addresses = await readyAddresses(file, () => (shell.exitCode === null ? undefined : `the shell exited with ${shell.exitCode}`));
      expect(addresses.pid).not.toBe(shell.pid);
      shell.kill('SIGTERM');
      await shellExited;
      // The CLI, now an orphan, notices and stops as on SIGHUP.
      await eventually(
        async () => {
          expect(existsSync(file)).toBe(false);
          expect(await accepts(addresses.apiUrl)).toBe(false);
        },
        { what: 'the orphaned CLI to stop', timeout: 20_000, interval: 50 },
      );
      // Its log says what happened: no SIGHUP arrived (the SIGTERM went to the shell).
      await eventually(() => expect(stderr).toContain(`station-sim: its parent, the shell npx ran it in (pid ${shell.pid}), is gone (npx was killed, or its terminal closed), shutting down`), {
        what: 'the line saying why it stopped',
        timeout: 10_000,
      });
      expect(stderr).not.toContain('SIGHUP received');
    } finally {
      killGroup(shell.pid);
    }
  }, 90_000);

  it('npm run station-sim -- run --ready-file F, then kill of the npm process: the simulator stops too', async () => {
    const file = join(dir, 'npm.json');
    const npm = spawn('npm', ['run', '--silent', 'station-sim', '--', 'run', '--fixture', 'fixtures/ci.json', '--ready-file', file], {
      cwd: fileURLToPath(new URL('../..', import.meta.url)),
      stdio: 'ignore',
      detached: true,
    });
    const npmExited = new Promise<void>((resolve) => npm.once('exit', () => resolve()));
    try {
      const addresses = await readyAddresses(file, () => (npm.exitCode === null ? undefined : `npm exited with ${npm.exitCode}`));
      npm.kill('SIGTERM');
      await npmExited;
      await eventually(
        async () => {
          expect(existsSync(file)).toBe(false);
          expect(await accepts(addresses.apiUrl)).toBe(false);
        },
        { what: 'the simulator under npm to stop', timeout: 20_000, interval: 50 },
      );
    } finally {
      killGroup(npm.pid);
    }
  }, 90_000);
});
