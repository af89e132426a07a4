/**
 * The real CLI in child processes, against real sockets: what a user types is what is tested.
 */
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startEmbeddedBroker, type StartedBroker } from '../../src/broker/embedded-broker.js';
import { loadFixture } from '../../src/fixture/load-fixture.js';
import { CliProcess, runCliInProcess, runCliToEnd } from '../helpers/cli-process.js';
import { MqttObserver } from '../helpers/mqtt-observer.js';
import { mosquittoAvailable, startMosquitto } from '../helpers/mosquitto.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('station-sim CLI', () => {
  it('up: starts broker and fleet, prints one JSON ready line, and publishes offline for every station on SIGTERM', async () => {
    const fixture = await loadFixture('fixtures/ci.json');
    const cli = new CliProcess(['up', '--fixture', 'fixtures/ci.json', '--mqtt-port', '0', '--http-port', '0', '--json']);
    cleanups.push(async () => cli.child.exitCode === null && cli.signal('SIGKILL'));
    const ready = await cli.readyJson();
    expect(ready).toMatchObject({ event: 'ready', stations: 25, online: 24, seed: 7 });
    expect(ready.mqttUrl).toMatch(/^mqtt:\/\/127\.0\.0\.1:\d+$/);
    expect(ready.apiUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(ready.controlUrl).toBe(`${ready.apiUrl}/sim/v1`);
    expect(cli.stderr).toContain('control plane loopback only, no token');
    expect((await fetch(`${ready.controlUrl}/health`)).status).toBe(200);
    const observer = await MqttObserver.connect(ready.mqttUrl, ['stations/+/status']);
    cleanups.push(() => observer.close());
    for (const station of fixture.stations) {
      const seen = await observer.waitFor((m) => m.topic === `stations/${station.token}/status`, station.token);
      expect(seen.json.status).toBe(station.initialStatus);
    }
    observer.clear();
    expect(await cli.signal('SIGTERM')).toBe(0);
    const offline = new Set(observer.messages.filter((m) => m.json.status === 'offline').map((m) => m.topic));
    // The broker goes down with the process, so what matters is that every station said offline before it.
    expect(offline.size).toBe(24);
    expect(cli.stderr).toContain('SIGTERM received, shutting down');
  });

  it('stations: runs the fleet against an external broker; a killed process is marked offline by each last will', async () => {
    const broker: StartedBroker = await startEmbeddedBroker({ port: 0 });
    cleanups.push(() => broker.stop());
    const cli = new CliProcess(['stations', '--broker', broker.url, '--fixture', 'fixtures/ci.json', '--json']);
    cleanups.push(async () => cli.child.exitCode === null && cli.signal('SIGKILL'));
    const ready = await cli.readyJson();
    expect(ready).toMatchObject({ stations: 25, online: 24, mqttUrl: broker.url });
    const observer = await MqttObserver.connect(broker.url, ['stations/CI-1/status']);
    cleanups.push(() => observer.close());
    await observer.waitFor((m) => m.json.status === 'online', 'CI-1 online');
    await cli.signal('SIGKILL');
    const will = await observer.waitFor((m) => m.json.status === 'offline', 'the last will of CI-1');
    expect(will.json).toMatchObject({ stationId: 1, status: 'offline' });
  });

  it('stations: an unreachable broker is one clear line and exit code 1, with no credentials shown', async () => {
    const result = await runCliToEnd(['stations', '--broker', 'mqtt://user:hunter2@127.0.0.1:1', '--fixture', 'fixtures/ci.json']);
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toEqual(['station-sim: The MQTT broker at mqtt://***@127.0.0.1:1 cannot be reached (ECONNREFUSED)']);
    expect(result.stderr).not.toContain('hunter2');
  });

  it.runIf(mosquittoAvailable())('stations and api: refused credentials are one clear line', async () => {
    const mosquitto = await startMosquitto({ users: { station: 'right-password' } });
    cleanups.push(() => mosquitto.stop());
    const url = `mqtt://station:wrong-password@127.0.0.1:${mosquitto.port}`;
    // The mqtt.js clients (fleet agent, control plane) keep reconnecting after a refused CONNACK
    // once they have been up, but a refusal at start still fails the start.
    for (const command of [['stations'], ['api', '--http-port', '0']]) {
      const result = await runCliToEnd([...command, '--broker', url, '--fixture', 'fixtures/ci.json']);
      expect(result.code).toBe(1);
      expect(result.stderr.trim().split('\n')).toEqual([
        `station-sim: The MQTT broker at mqtt://***@127.0.0.1:${mosquitto.port} refused the connection: Not authorized`,
      ]);
    }
    const good = new CliProcess(['stations', '--broker', `mqtt://station:right-password@127.0.0.1:${mosquitto.port}`, '--fixture', 'fixtures/ci.json', '--json']);
    cleanups.push(async () => good.child.exitCode === null && good.signal('SIGKILL'));
    expect((await good.readyJson()).online).toBe(24);
  });

  it('fixture validate: valid fixtures pass; invalid ones list every schema problem (rule checks wait for a schema-valid file) and exit 1', async () => {
    const ok = await runCliToEnd(['fixture', 'validate', 'fixtures/demo.json']);
    expect(ok).toMatchObject({ code: 0, stdout: 'fixtures/demo.json: valid (5 stations, 2 accounts)\n' });
    const dir = await mkdtemp(join(tmpdir(), 'fixture-'));
    const bad = join(dir, 'x.json');
    await writeFile(bad, JSON.stringify({ stations: [{ token: 'A', stationId: 1, locks: [{ lockId: '1' }] }, { token: 'A', stationId: 2, locks: [{ lockId: 2 }] }] }));
    const result = await runCliToEnd(['fixture', 'validate', bad]);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(`station-sim: invalid fixture (1 problem):\n${bad}: /stations/1/locks/0/lockId: must be a string\n`);
  });

  it('up refuses an invalid fixture before starting anything, and an explicit port that is taken', async () => {
    const broker = await startEmbeddedBroker({ port: 0 });
    cleanups.push(() => broker.stop());
    const taken = await runCliToEnd(['up', '--fixture', 'fixtures/ci.json', '--mqtt-port', String(broker.port), '--http-port', '0']);
    expect(taken.code).toBe(1);
    expect(taken.stderr).toBe(`station-sim: MQTT port ${broker.port} on 127.0.0.1 is already in use\n`);
    const missing = await runCliToEnd(['up', '--fixture', 'nope.json', '--mqtt-port', '0', '--http-port', '0']);
    expect(missing).toMatchObject({ code: 1, stdout: '' });
    expect(missing.stderr).toContain('nope.json: /: file not found');
  });

  it('run takes no --host; its --help says its HTTP port is a free one by default, the variables it sets and its exit codes', async () => {
    const host = await runCliToEnd(['run', '--host', '127.0.0.1', '--', 'true']);
    expect(host.code).toBe(2);
    expect(host.stderr).toContain('Unknown argument: host');
    const help = await runCliToEnd(['run', '--help']);
    expect(help.stdout.replace(/\s+/g, ' ')).toContain('--http-port Port of the HTTP server (/v1 API and /sim/v1 control plane) (default: a free one;');
    // The variables the command gets and the exit codes, one line each (test/cli/exit-codes.test.ts checks the codes).
    for (const variable of ['STATION_SIM_API_URL', 'STATION_SIM_MQTT_URL', 'STATION_SIM_CONTROL_URL', 'STATION_SIM_CONTROL_TOKEN']) {
      expect(help.stdout).toMatch(new RegExp(`^  ${variable} +\\S.+$`, 'm'));
    }
    for (const exit of ['125', '127', '128 \\+ N', '2 ']) expect(help.stdout).toMatch(new RegExp(`^  ${exit} +\\S`, 'm'));
  });

  it('up --no-login-throttle lets failed logins through that the fixture would throttle', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'station-sim-cli-'));
    const file = join(dir, 'strict.json');
    const ci = JSON.parse(await readFile('fixtures/ci.json', 'utf8')) as { api?: object };
    await writeFile(file, JSON.stringify({ ...ci, api: { ...ci.api, loginThrottle: { perAddress: { maxFailures: 1 } } } }));
    const statuses = async (extra: string[]): Promise<number[]> => {
      const cli = new CliProcess(['up', '--fixture', file, '--mqtt-port', '0', '--http-port', '0', '--json', ...extra]);
      cleanups.push(async () => cli.child.exitCode === null && cli.signal('SIGKILL'));
      const { apiUrl } = (await cli.readyJson()) as { apiUrl: string };
      const seen: number[] = [];
      for (let n = 0; n < 3; n += 1) {
        const response = await fetch(`${apiUrl}/v1/auth/login`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ email: 'ci@example.com', password: 'not-the-password' }),
        });
        seen.push(response.status);
      }
      await cli.signal('SIGTERM');
      return seen;
    };
    // Without the flag the second one is 429 (test/service/auth/login-throttling.test.ts).
    expect(await statuses(['--no-login-throttle'])).toEqual([401, 401, 401]);
  });

  it('unknown commands and options are usage errors', async () => {
    const result = await runCliToEnd(['up', '--frobnicate']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('Unknown argument: frobnicate');
  });

  it('bad option values are one usage line each, before anything starts', async () => {
    const cases: [string[], string][] = [
      [['up', '--broker', ''], '--broker needs a URL, e.g. mqtt://127.0.0.1:1883'],
      [['up', '--mqtt-port', '70000'], '--mqtt-port must be a whole number from 0 to 65535, not 70000'],
      [['stations', '--broker', 'mqtt://127.0.0.1:1', '--shard', '3/2'], '--shard must be k/n with 1 <= k <= n, not "3/2"'],
      [['up', '--time-scale', '0', '--mqtt-port', '0', '--http-port', '0'], '--time-scale must be a positive number, not 0'],
      [['up', '--seed', '1.5', '--mqtt-port', '0', '--http-port', '0'], '--seed must be a whole number from 0 to 2147483647, not "1.5"'],
      // What was typed, not what a number parser made of it ("NaN", or 0 for an empty value).
      [['up', '--seed', 'abc', '--mqtt-port', '0', '--http-port', '0'], '--seed must be a whole number from 0 to 2147483647, not "abc"'],
      [['run', '--seed', '', '--', 'true'], '--seed must be a whole number from 0 to 2147483647, not ""'],
      [['up', '--command-timeout', '3000000000', '--mqtt-port', '0', '--http-port', '0'], '--command-timeout must be a whole number from 1 to 2147483647, not 3000000000'],
      [['up', '--dashboard', 'on', '--json', '--mqtt-port', '0', '--http-port', '0'], '--dashboard on and --json do not go together: the dashboard takes the terminal that the JSON line goes to'],
      [['up', '--broker', 'mqtt://127.0.0.1:1', '--mqtt-port', '1884', '--http-port', '0'], "--mqtt-port is the embedded broker's port; with --broker there is no embedded broker (the port is in the URL)"],
      [['up', '--broker', 'mqtt://127.0.0.1:1', '--no-broker-thread', '--http-port', '0'], '--no-broker-thread is about the embedded broker; with --broker there is no embedded broker'],
      // DESIGN.md, trust model: beyond loopback the control plane needs its token, or an explicit opt-out.
      ...(['up', 'api'] as const).map((command): [string[], string] => [
        [command, '--host', '0.0.0.0', '--broker', 'mqtt://127.0.0.1:1', '--http-port', '0'],
        '--host 0.0.0.0 lets other machines reach the control plane, which opens any lock and resets the fleet: set STATION_SIM_CONTROL_TOKEN (or --control-token), or add --insecure-control to leave it open to everyone who can reach it',
      ]),
    ];
    // In this process (a process each took 11 CLI start-ups, over 30 s on a loaded machine); the
    // first case once more as a real process, for the exit code and stderr a script sees.
    for (const [args, message] of cases) {
      const { code, stdout, stderr } = await runCliInProcess(args);
      expect({ args, code, stdout, stderr }).toEqual({ args, code: 2, stdout: '', stderr: `station-sim: ${message}\nRun station-sim --help for usage.\n` });
    }
    const [firstArgs, firstMessage] = cases[0]!;
    const result = await runCliToEnd(firstArgs);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(`station-sim: ${firstMessage}\nRun station-sim --help for usage.\n`);
  });

  it('stations --shard-from-env n: refuses a missing or out-of-range JOB_COMPLETION_INDEX before anything starts', async () => {
    // Shards from the index are run end to end by test/deploy/orchestrator.test.ts; here, the refusals.
    const usage = (message: string) => ({ code: 2, stdout: '', stderr: `station-sim: ${message}\nRun station-sim --help for usage.\n` });
    const stations = (...flags: string[]) => runCliInProcess(['stations', '--broker', 'mqtt://127.0.0.1:1', ...flags]);
    try {
      vi.stubEnv('JOB_COMPLETION_INDEX', undefined);
      expect(await stations('--shard-from-env', '3')).toEqual(usage('--shard-from-env needs JOB_COMPLETION_INDEX (set by Kubernetes in each pod of an Indexed Job), and it is not set'));
      vi.stubEnv('JOB_COMPLETION_INDEX', '3');
      // Index 3 of a Job with more completions than the shards it was told: a station would be lost.
      expect(await stations('--shard-from-env', '3')).toEqual(usage('JOB_COMPLETION_INDEX must be 0 to 2 with --shard-from-env 3, not "3": does the Job\'s completions equal n?'));
      vi.stubEnv('JOB_COMPLETION_INDEX', '0');
      expect(await stations('--shard-from-env', '0')).toEqual(usage('--shard-from-env must be the number of shards n >= 1, not "0"'));
      expect((await stations('--shard-from-env', '2', '--shard', '1/2')).code).toBe(2);
    } finally {
      vi.unstubAllEnvs();
    }
  });
});
