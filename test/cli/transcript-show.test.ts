/**
 * `station-sim transcript show`: in process (runCli with its own streams) where that is enough,
 * and as a real process on a real pipe for what only a pipe shows (EPIPE when `| head` exits).
 */
import { execFileSync } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/run-cli.js';
import { CliProcess } from '../helpers/cli-process.js';
import { eventually } from '../helpers/eventually.js';

const statusLine = (i: number): string =>
  JSON.stringify({ t: new Date(Date.parse('2026-01-01T00:00:00.000Z') + i).toISOString(), kind: 'mqtt', direction: 'up', station: `F-${i}`, topic: `stations/F-${i}/status`, payload: { stationId: i, status: 'online', batteryVoltage: 12.6 } });

async function transcriptFile(lines: string[]): Promise<string> {
  const file = join(await mkdtemp(join(tmpdir(), 'transcript-')), 't.jsonl');
  await writeFile(file, `${lines.join('\n')}\n`);
  return file;
}

/** A stream that collects what is written, taking `delayMs` per write as a slow terminal or pipe would. */
function sink(options: { delayMs?: number; fail?: (writes: number) => Error | undefined } = {}) {
  const seen = { text: '', offered: 0, writes: 0, maxBuffered: 0 };
  const stream = new Writable({
    highWaterMark: 16 * 1024,
    decodeStrings: false,
    write(chunk: string, _encoding, callback) {
      seen.writes += 1;
      const error = options.fail?.(seen.writes);
      if (error) return callback(error);
      seen.text += chunk;
      setTimeout(callback, options.delayMs ?? 0);
    },
  });
  const write = stream.write.bind(stream);
  stream.write = ((...args: Parameters<typeof write>) => {
    seen.offered += 1;
    const ok = write(...args);
    seen.maxBuffered = Math.max(seen.maxBuffered, stream.writableLength);
    return ok;
  }) as typeof stream.write;
  return { stream, seen };
}

describe('transcript show', () => {
  it('waits for a slow stdout instead of queueing the whole timeline in memory', async () => {
    const file = await transcriptFile(Array.from({ length: 20_000 }, (_, i) => statusLine(i)));
    const stdout = sink({ delayMs: 1 });
    const stderr = sink();
    const code = await runCli(['transcript', 'show', file], { stdout: stdout.stream, stderr: stderr.stream });
    expect(code).toBe(0);
    // About 3 MB of timeline; never more than one chunk over the stream's limit waits in memory.
    expect(stdout.seen.maxBuffered).toBeLessThan(200 * 1024);
    expect(stderr.seen.text).toBe('');
    expect(stdout.seen.text.split('\n').filter(Boolean)).toHaveLength(20_000);
    expect(stdout.seen.text.length).toBeGreaterThan(2_000_000);
  });

  it.runIf(process.platform === 'linux')('prints the timeline while the file is still being read, not after loading all of it', async () => {
    const fifo = join(await mkdtemp(join(tmpdir(), 'transcript-')), 't.fifo');
    execFileSync('mkfifo', [fifo]);
    const stdout = sink();
    const stderr = sink();
    const shown = runCli(['transcript', 'show', fifo], { stdout: stdout.stream, stderr: stderr.stream });
    const writer = createWriteStream(fifo);
    // More than one chunk of output, so some of it must be written before the input ends.
    writer.write(`${Array.from({ length: 1_000 }, (_, i) => statusLine(i)).join('\n')}\n`);
    await eventually(() => expect(stdout.seen.text).toContain('F-0  stations/F-0/status'), { timeout: 10_000 });
    expect(writer.closed).toBe(false);
    writer.end(`${statusLine(1_000)}\n`);
    expect(await shown).toBe(0);
    expect(stdout.seen.text.trim().split('\n')).toHaveLength(1_001);
  });

  it('ends quietly with exit code 0 when the reader goes away (EPIPE), and stops reading', async () => {
    const file = await transcriptFile(Array.from({ length: 20_000 }, (_, i) => statusLine(i)));
    const epipe = (): Error => Object.assign(new Error('write EPIPE'), { code: 'EPIPE', errno: -32, syscall: 'write' });
    const stdout = sink({ fail: (writes) => (writes > 1 ? epipe() : undefined) });
    const stderr = sink();
    const code = await runCli(['transcript', 'show', file], { stdout: stdout.stream, stderr: stderr.stream });
    expect(code).toBe(0);
    expect(stderr.seen.text).toBe('');
    // It stopped at the error instead of offering the rest of the timeline to a dead stream.
    expect(stdout.seen.offered).toBeLessThan(5);
  });

  it('skips lines that are not entries of the right shape, says how many on one stderr line, and never crashes on them', async () => {
    const file = await transcriptFile([
      '{"t":"2026-01-01T00:00:00.000Z","kind":"mqtt","direction":"down","station":"S","lockId":"1","topic":"stations/S/locks/1/unlock","payload":{"commandId":"c-1"},"commandId":"c-1"}',
      '{"t":"2026-01-01T00:00:00.100Z","kind":"note","text":"hand-written"}',
      '{"t":"yesterday","kind":"sim","event":"control","detail":"x"}',
      '{"t":"2026-01-01T00:00:00.200Z","kind":"mqtt","direction":"up","station":"S","lockId":"1","payload":{"status":"unlocked"}}',
      '{"t":"2026-01-01T00:00:00.300Z","kind":"mqtt","direction":"up","station":"S","lockId":"1","topic":"stations/S/locks/1/state","payload":{"status":"locked"}}',
    ]);
    for (const args of [[], ['--command', 'c-1']]) {
      const stdout = sink();
      const stderr = sink();
      const code = await runCli(['transcript', 'show', file, ...args], { stdout: stdout.stream, stderr: stderr.stream });
      expect(code, args.join(' ')).toBe(0);
      expect(stdout.seen.text).not.toMatch(/undefined|NaN/);
      expect(stdout.seen.text.trim().split('\n')).toHaveLength(2);
      expect(stderr.seen.text).toBe(`station-sim: 3 line(s) of ${file} are not transcript entries and were skipped\n`);
    }
  });

  it('exits 0 without a stack trace when `| head` closes the pipe', async () => {
    const file = await transcriptFile(Array.from({ length: 50_000 }, (_, i) => statusLine(i)));
    const cli = new CliProcess(['transcript', 'show', file]);
    // Read the first output, then go away as head does.
    await new Promise<void>((resolve) => cli.child.stdout.once('data', () => resolve()));
    cli.child.stdout.destroy();
    expect(await cli.exited).toBe(0);
    expect(cli.stderr).not.toMatch(/EPIPE|Error/);
  });

  describe('--command, --station and --kind', () => {
    const at = (ms: number): string => new Date(Date.parse('2026-01-01T00:00:00.000Z') + ms).toISOString();
    const unlock = (ms: number, station: string, commandId: string): string =>
      JSON.stringify({ t: at(ms), kind: 'mqtt', direction: 'down', station, lockId: '1', topic: `stations/${station}/locks/1/unlock`, message: 'unlock', payload: { commandId }, commandId });
    const lines = [
      JSON.stringify({ t: at(0), kind: 'api', method: 'POST', route: '/v1/auth/login', status: 200 }),
      unlock(1, 'A', 'aaaa-1111'),
      JSON.stringify({ t: at(2), kind: 'api', method: 'POST', route: '/v1/stations/:station_token/locks/:lock_id/unlock', status: 200, station: 'A', lockId: '1', outcome: 'accepted', commandId: 'aaaa-1111' }),
      unlock(3, 'B', 'aaaa-2222'),
      JSON.stringify({ t: at(4), kind: 'api', method: 'POST', route: '/v1/stations/:station_token/locks/:lock_id/unlock', status: 200, station: 'B', lockId: '1', outcome: 'BATTERY_LOW', commandId: 'aaaa-2222' }),
      JSON.stringify({ t: at(5), kind: 'sim', event: 'control', detail: 'reset' }),
      JSON.stringify({ t: at(6), kind: 'sim', event: 'fault', station: 'C', detail: 'dropCommands', lockId: '1', commandId: 'bbbb-3333' }),
      unlock(7, 'C', 'bbbb-3333'),
      ...['cccc-01', 'cccc-02', 'cccc-03', 'cccc-04', 'cccc-05', 'cccc-06', 'cccc-07'].map((id, i) => unlock(8 + i, 'D', id)),
    ];
    const show = async (...args: string[]) => {
      const file = await transcriptFile(lines);
      const stdout = sink();
      const stderr = sink();
      const code = await runCli(['transcript', 'show', file, ...args], { stdout: stdout.stream, stderr: stderr.stream });
      return { code, out: stdout.seen.text.trim().split('\n').filter(Boolean), err: stderr.seen.text };
    };

    it('takes a unique prefix of a command id for the whole id', async () => {
      const { code, out } = await show('--command', 'bbbb');
      expect(code).toBe(0);
      expect(out).toHaveLength(2);
      expect(out[0]).toContain('SIM   fault C: dropCommands');
      expect(out[1]).toContain('MQTT  → C/1');
      const whole = await show('--command', 'aaaa-2222');
      expect(whole.out).toHaveLength(2);
      expect(whole.out[1]).toContain('B/1 → 200 BATTERY_LOW');
    });

    it('refuses an ambiguous prefix naming up to five candidates, and a prefix that matches nothing', async () => {
      const two = await show('--command', 'aaaa');
      expect(two.code).not.toBe(0);
      expect(two.err).toContain('--command aaaa is ambiguous');
      expect(two.err).toContain('2 command ids start with it (aaaa-1111, aaaa-2222); give more of the id');
      const seven = await show('--command', 'cccc');
      expect(seven.err).toContain('7 command ids start with it (cccc-01, cccc-02, cccc-03, cccc-04, cccc-05, and 2 more)');
      const none = await show('--command', 'zz');
      expect(none.code).not.toBe(0);
      expect(none.err).toMatch(/no command zz in \S+ \(no command id is or starts with it\)/);
      expect(none.out).toEqual([]);
    });

    it('keeps the entries of the stations named, with fleet-wide actions', async () => {
      const { code, out } = await show('--station', 'A', '--station', 'C');
      expect(code).toBe(0);
      expect(out.map((line) => line.replace(/^\s*\+\d+\.\d+s\s+/, '').slice(0, 4).trim())).toEqual(['MQTT', 'API', 'SIM', 'SIM', 'MQTT']);
      expect(out.join('\n')).not.toMatch(/ B\/1| D\/1|auth\/login/);
    });

    it('keeps the kinds named: an entry kind, a contract message or a sim event', async () => {
      expect((await show('--kind', 'api')).out).toHaveLength(3);
      expect((await show('--kind', 'unlock', '--station', 'D')).out).toHaveLength(7);
      const both = await show('--kind', 'fault', '--kind', 'control');
      expect(both.out).toHaveLength(2);
      const chain = await show('--command', 'aaaa-1', '--kind', 'api');
      expect(chain.out).toHaveLength(1);
      expect(chain.out[0]).toContain('A/1 → 200 accepted  [aaaa-1111]');
    });

    it('refuses an unknown kind, listing the known ones', async () => {
      const { code, err, out } = await show('--kind', 'api', '--kind', 'http');
      expect(code).not.toBe(0);
      expect(err).toContain('unknown --kind "http": the kinds are api, mqtt, sim, judge, client, status, lockState, unlock, acks, fault, control, timeout');
      expect(out).toEqual([]);
    });
  });
});
