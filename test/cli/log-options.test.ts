/**
 * The `--log…` options of `up`, `api` and `run`: bad values are one usage line before anything
 * starts, a log file that cannot be opened is one line, and `run --log-file` writes a rotated,
 * sampled log that is complete when the command ends.
 */
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCliInProcess as cli, runCliToEnd } from '../helpers/cli-process.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'station-sim-log-cli-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('--log options', () => {
  it('refuses bad values with one usage line each, before anything starts', async () => {
    const file = join(dir, 'api.log');
    const ports = ['--mqtt-port', '0', '--http-port', '0', '--fixture', 'ci'];
    const cases: [string[], string][] = [
      [['up', ...ports, '--log-file', file, '--log-max-size', '-3'], '--log-max-size must be a size of at least 1k: bytes, or a whole number with k, m or g (10m is 10 MiB), not "-3"'],
      [['up', ...ports, '--log-file', file, '--log-max-size', '10x'], '--log-max-size must be a size of at least 1k: bytes, or a whole number with k, m or g (10m is 10 MiB), not "10x"'],
      [['up', ...ports, '--log-file', file, '--log-max-size', '512'], '--log-max-size must be a size of at least 1k: bytes, or a whole number with k, m or g (10m is 10 MiB), not "512"'],
      [['up', ...ports, '--log-file', file, '--log-files', '0'], '--log-files must be a whole number from 1 to 100, not "0"'],
      [['up', ...ports, '--log-file', file, '--log-files', 'many'], '--log-files must be a whole number from 1 to 100, not "many"'],
      [['up', ...ports, '--log', '--log-max-size', '10m'], '--log-max-size is about --log-file, which is not given'],
      [['api', '--broker', 'mqtt://127.0.0.1:1', '--log-files', '2'], '--log-files is about --log-file, which is not given'],
      [['run', '--log', '--log-requests-per-second', '-1', '--', 'true'], '--log-requests-per-second must be a whole number of at least 0 (0: no sampling), not "-1"'],
      [['run', '--log-requests-per-second', '50', '--', 'true'], '--log-requests-per-second needs --log or --log-file'],
      [['up', ...ports, '--log-file', ''], '--log-file needs a file path'],
    ];
    for (const [args, message] of cases) {
      expect({ args, ...(await cli(args)) }).toEqual({ args, code: 2, stdout: '', stderr: `station-sim: ${message}\nRun station-sim --help for usage.\n` });
    }
    expect(await readdir(dir)).toEqual([]);
  });

  it('says in one line why a log file cannot be opened, before the simulator starts', async () => {
    const missing = join(dir, 'missing', 'api.log');
    const result = await cli(['up', '--mqtt-port', '0', '--http-port', '0', '--fixture', 'ci', '--log-file', missing]);
    expect(result).toEqual({ code: 1, stdout: '', stderr: `station-sim: cannot write the log to ${missing}: its directory does not exist (ENOENT)\n` });
  });

  it('documents the options in --help', async () => {
    // In a child process: yargs writes --help to the process's own stdout and exits. `api` and
    // `run` take the same options from the same declaration (httpOptionGroup).
    const help = (await runCliToEnd(['up', '--help'])).stdout.replace(/\s+/g, ' ');
    for (const option of ['--log-file', '--log-max-size', '--log-files', '--log-requests-per-second']) expect(help).toContain(option);
    expect(help).toContain('(default 10m)');
  });

  it('run --log-file: a rotated log, sampled under load, flushed when the command ends', async () => {
    const file = join(dir, 'api.log');
    // 200 requests as fast as one connection goes: well over 5 a second.
    const script = `
      (async () => {
        for (let i = 0; i < 200; i += 1) await (await fetch(process.env.STATION_SIM_API_URL + '/v1/stations/CI-1')).text();
      })();`;
    const result = await cli([
      'run', '--fixture', 'ci', '--log-file', file, '--log-max-size', '4k', '--log-files', '1', '--log-requests-per-second', '5', '--', process.execPath, '-e', script,
    ]);
    expect(result.code, result.stderr).toBe(0);
    expect((await readdir(dir)).sort().filter((name) => name !== 'api.log.1')).toEqual(['api.log']);
    const text = (await readdir(dir)).includes('api.log.1') ? (await readFile(`${file}.1`, 'utf8')) + (await readFile(file, 'utf8')) : await readFile(file, 'utf8');
    const lines = text.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as { msg: string; dropped?: number; logged?: number });
    const summaries = lines.filter((line) => line.msg === 'request lines sampled');
    expect(summaries.length).toBeGreaterThan(0);
    // Every request is either logged or counted as dropped, once.
    const counted = summaries.reduce((sum, line) => sum + (line.dropped ?? 0) + (line.logged ?? 0), 0);
    expect(counted).toBeLessThanOrEqual(200);
    expect(summaries.reduce((sum, line) => sum + (line.dropped ?? 0), 0)).toBeGreaterThan(100);
    expect((await stat(file)).size).toBeLessThan(8192);
  });
});
