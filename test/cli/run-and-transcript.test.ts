import { existsSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CliProcess, runCliToEnd } from '../helpers/cli-process.js';
import { eventually } from '../helpers/eventually.js';

const node = process.execPath;

describe('station-sim run', () => {
  it('runs the command with the addresses in its environment and exits with its code', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'run-'));
    const out = join(dir, 'env.json');
    const ready = join(dir, 'ready.json');
    const script = `
      const fs = require('node:fs');
      const env = { api: process.env.STATION_SIM_API_URL, mqtt: process.env.STATION_SIM_MQTT_URL, control: process.env.STATION_SIM_CONTROL_URL };
      // The ready file exists while the simulator runs (it is removed at stop).
      const ready = JSON.parse(fs.readFileSync(${JSON.stringify(ready)}, 'utf8'));
      fetch(env.control + '/health').then((r) => r.json()).then((health) => {
        fs.writeFileSync(${JSON.stringify(out)}, JSON.stringify({ env, health, ready }));
        process.exit(7);
      });`;
    const result = await runCliToEnd(['run', '--fixture', 'fixtures/ci.json', '--ready-file', ready, '--', node, '-e', script]);
    expect(result.code).toBe(7);
    const seen = JSON.parse(await readFile(out, 'utf8'));
    expect(seen.env.api).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(seen.env.mqtt).toMatch(/^mqtt:\/\/127\.0\.0\.1:\d+$/);
    expect(seen.env.control).toBe(`${seen.env.api}/sim/v1`);
    expect(seen.health).toMatchObject({ ready: true, stations: { total: 25 } });
    expect(seen.ready).toMatchObject({ apiUrl: seen.env.api, mqttUrl: seen.env.mqtt, seed: 7 });
    expect(existsSync(ready)).toBe(false);
  });

  it('reports a command killed by a signal as a shell does, 128 + its number', async () => {
    for (const [signal, code] of [['SIGHUP', 129], ['SIGUSR2', 140], ['SIGTERM', 143]] as const) {
      const result = await runCliToEnd(['run', '--fixture', 'fixtures/ci.json', '--', node, '-e', `process.kill(process.pid, '${signal}')`]);
      expect(result.code, signal).toBe(code);
    }
  }, 90_000); // three simulators, one after the other

  it('forwards SIGHUP (a closed terminal) to the command, then stops', async () => {
    const cli = new CliProcess(['run', '--fixture', 'fixtures/ci.json', '--', node, '-e', 'console.log("child up"); setInterval(() => {}, 1000)']);
    await eventually(() => expect(cli.stdout).toContain('child up'), { timeout: 20_000, what: 'the command to start' });
    // The command dies of the forwarded SIGHUP and `run` reports it as a shell would: 128 + 1.
    expect(await cli.signal('SIGHUP')).toBe(129);
  });

  it('never runs the command when the simulator cannot start', async () => {
    const result = await runCliToEnd(['run', '--fixture', 'missing.json', '--', node, '-e', 'console.log("RAN")']);
    expect(result.code).toBe(125);
    expect(result.stdout).not.toContain('RAN');
    expect(result.stderr).toContain('missing.json: /: file not found');
  });
});

describe('transcripts', () => {
  it('records an unlock chain with its command id and shows it, with no token or password', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'transcript-'));
    const file = join(dir, 't.jsonl');
    const script = `
      const api = process.env.STATION_SIM_API_URL;
      (async () => {
        const login = await (await fetch(api + '/v1/auth/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'ci@example.com', password: 'ci-password' }) })).json();
        const auth = { authorization: 'Bearer ' + login.accessToken };
        await fetch(api + '/v1/stations/CI-1/locks/2/unlock', { method: 'POST', headers: auth });
        await new Promise((r) => setTimeout(r, 400));
        console.log(login.accessToken.length > 20 ? 'token-ok' : 'no-token');
      })();`;
    const run = await runCliToEnd(['run', '--fixture', 'fixtures/ci.json', '--record', file, '--', node, '-e', script]);
    expect(run.code).toBe(0);
    const text = await readFile(file, 'utf8');
    expect(text).not.toMatch(/eyJ|ci-password|Bearer/);
    const request = text.split('\n').filter(Boolean).map((line) => JSON.parse(line)).find((e) => e.kind === 'api' && e.route.endsWith('/unlock'));
    expect(request).toMatchObject({ method: 'POST', status: 200, commandId: expect.any(String) });
    const shown = await runCliToEnd(['transcript', 'show', file, '--command', request.commandId]);
    expect(shown.code).toBe(0);
    const lines = shown.stdout.trim().split('\n');
    expect(lines.map((line) => line.replace(/^\s*\+\d+\.\d+s\s+/, '').split('  ')[0])).toEqual(['MQTT', 'MQTT', 'API', 'MQTT', 'MQTT']);
    expect(lines[0]).toContain('→ CI-1/2  stations/CI-1/locks/2/unlock');
    expect(lines[1]).toContain('stations/CI-1/acks');
    expect(lines[3]).toContain('"status":"unlocked"');
    expect(lines[4]).toContain('"status":"locked"');
  });

  // /dev/full fails every write with ENOSPC, as a full disk does.
  it.runIf(existsSync('/dev/full'))('says on stderr, naming the file and the error, when the transcript cannot be written', async () => {
    const run = await runCliToEnd(['run', '--fixture', 'fixtures/ci.json', '--record', '/dev/full', '--', node, '-e', 'setTimeout(() => {}, 200)']);
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(/transcript \/dev\/full could not be written \(ENOSPC\b.*recording stopped/);
    expect(run.stderr.match(/could not be written/g)).toHaveLength(1);
  });

  it('with --clock manual, replay the same run byte for byte once the start instant is taken out', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'transcript-'));
    const fixture = join(dir, 'f.json');
    await writeFile(
      fixture,
      JSON.stringify({
        defaults: { unlockDelayMs: { min: 100, max: 900 }, relockMs: 400, heartbeatMs: 500 },
        accounts: [{ email: 'm@example.com', password: 'pw', stations: ['M-1', 'M-2'] }],
        stations: [
          { token: 'M-1', stationId: 1, locks: [{ lockId: '1' }] },
          { token: 'M-2', stationId: 2, locks: [{ lockId: '1' }] },
        ],
        scenario: [
          { at: '1s', station: 'M-1', do: 'offline' },
          { at: '2s', station: 'M-1', do: 'online' },
          { at: '1500ms', station: 'M-2', do: 'reboot', downMs: 1000 },
        ],
      }),
    );
    // Unlocks one after another between advances of the manual clock, through /v1 and /sim/v1.
    const script = `
      const api = process.env.STATION_SIM_API_URL, control = process.env.STATION_SIM_CONTROL_URL;
      const post = (url, body, headers = {}) => fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
      (async () => {
        const { accessToken } = await (await post(api + '/v1/auth/login', { email: 'm@example.com', password: 'pw' })).json();
        for (let round = 0; round < 6; round += 1) {
          for (const token of ['M-1', 'M-2']) await post(api + '/v1/stations/' + token + '/locks/1/unlock', undefined, { authorization: 'Bearer ' + accessToken });
          await post(control + '/clock/advance', { ms: 600 });
        }
      })();`;
    const record = async (name: string): Promise<string> => {
      const file = join(dir, name);
      const run = await runCliToEnd(['run', '--fixture', fixture, '--seed', '5', '--clock', 'manual', '--record', file, '--', node, '-e', script]);
      expect(run.code, run.stderr).toBe(0);
      const text = await readFile(file, 'utf8');
      // Nothing happens before the first advance but at the start: the first entry's time is the start.
      const start = Date.parse((JSON.parse(text.slice(0, text.indexOf('\n'))) as { t: string }).t);
      return text.replace(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z/g, (time) => `+${Date.parse(time) - start}`);
    };
    const first = await record('a.jsonl');
    const again = await record('b.jsonl');
    expect(first).toContain('"outcome":"STATION_OFFLINE"');
    expect(first).toContain('"outcome":"accepted"');
    if (again !== first) expect(again.split('\n')).toEqual(first.split('\n'));
    expect(createHash('sha256').update(again).digest('hex')).toBe(createHash('sha256').update(first).digest('hex'));
  }, 60_000);
});
