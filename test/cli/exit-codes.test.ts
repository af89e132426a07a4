/**
 * The exit codes README's "Command line" and `run --help` document: 2 for a usage error of any
 * command, 1 for another command's failure, and for `run` the command's own code, 127 when it cannot
 * be run, 125 when the simulator cannot start. In this process (a CLI start-up takes seconds here);
 * test/cli/run-and-transcript.test.ts has the signal codes (128 + N) from real processes.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCliInProcess } from '../helpers/cli-process.js';
import { RUN_EXIT } from '../../src/cli/commands/run/interface.js';
import { USAGE_EXIT_CODE } from '../../src/cli/run-cli.js';

const node = process.execPath;
const servers: Server[] = [];
afterAll(() => Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve)))));

describe('exit codes', () => {
  it('2 for a usage error, whatever the command', async () => {
    const cases = [
      [],
      ['frobnicate'],
      ['up', '--frobnicate'],
      ['run', '--frobnicate', '--', 'true'],
      ['run'],
      ['run', '--ready-file', '', '--', 'true'],
      ['run', '--http-port', '70000', '--', 'true'],
      ['fixture', 'validate'],
      ['transcript', 'show'],
      ['certs'],
    ];
    for (const args of cases) {
      const { code, stderr } = await runCliInProcess(args);
      expect({ args, code }).toEqual({ args, code: USAGE_EXIT_CODE });
      expect(stderr).toMatch(/^station-sim: .+\nRun station-sim --help for usage\.\n$/s);
    }
  });

  it('1 for the failure of a command other than run', async () => {
    const { code, stderr } = await runCliInProcess(['fixture', 'validate', 'missing.json']);
    expect(code).toBe(1);
    expect(stderr).toContain('missing.json: /: file not found');
  });

  it("run: 125 when the simulator cannot start (bad fixture, HTTP port in use), and the command never runs", async () => {
    // A ready file left by an earlier run is removed even though this one never gets ready.
    const readyFile = join(await mkdtemp(join(tmpdir(), 'station-sim-exit-')), 'sim.json');
    await writeFile(readyFile, '{"apiUrl":"http://127.0.0.1:1"}\n');
    const missing = await runCliInProcess(['run', '--fixture', 'missing.json', '--ready-file', readyFile, '--', node, '-e', 'console.log("RAN")']);
    expect(existsSync(readyFile)).toBe(false);
    expect(missing.code).toBe(RUN_EXIT.simulatorFailed);
    expect(missing.code).toBe(125);
    expect(missing.stderr).toContain('missing.json: /: file not found');
    expect(missing.stdout + missing.stderr).not.toContain('RAN');

    // A ready file that cannot be written fails in one line before anything starts.
    const nowhere = join(readyFile, '..', 'missing', 'sim.json');
    const unwritable = await runCliInProcess(['run', '--fixture', 'ci', '--ready-file', nowhere, '--', node, '-e', 'console.log("RAN")']);
    expect(unwritable).toEqual({ code: 125, stdout: '', stderr: `station-sim: cannot write the ready file ${nowhere}: its directory does not exist (ENOENT)\n` });

    const server = createServer();
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    const taken = await runCliInProcess(['run', '--fixture', 'ci', '--http-port', String(port), '--', node, '-e', 'console.log("RAN")']);
    expect(taken.code).toBe(125);
    expect(taken.stderr).toContain(`${port}`);
    expect(taken.stderr).toContain('in use');
  });

  it("run: the command's own code, and 127 when it cannot be run", async () => {
    const own = await runCliInProcess(['run', '--fixture', 'ci', '--', node, '-e', 'process.exit(3)']);
    expect(own.code).toBe(3);
    // The ready line is in the CI log (stderr), with the addresses and no token.
    expect(own.stderr).toMatch(/station-sim run: ready · API http:\/\/127\.0\.0\.1:\d+ · MQTT mqtt:\/\/127\.0\.0\.1:\d+ · control http:\/\/127\.0\.0\.1:\d+\/sim\/v1 · seed \d+\n/);
    const missing = await runCliInProcess(['run', '--fixture', 'ci', '--', '/nonexistent/station-sim-test-command']);
    expect(missing.code).toBe(RUN_EXIT.commandNotRunnable);
    expect(missing.stderr).toContain('cannot run /nonexistent/station-sim-test-command');
  });

  it('run passes the control token to the command when the control plane requires one, and never prints it', async () => {
    const secret = 'run-test-control-token-1234';
    const script = `process.exit(process.env.STATION_SIM_CONTROL_TOKEN === ${JSON.stringify(secret)} ? 0 : 9)`;
    const result = await runCliInProcess(['run', '--fixture', 'ci', '--control-token', secret, '--', node, '-e', script]);
    expect(result.code).toBe(0);
    expect(result.stdout + result.stderr).not.toContain(secret);
  });
});
