/**
 * A standalone `station-sim broker` has no health route or event stream, so it tells its refusals
 * on stderr (src/cli/broker-refusal-lines.ts): the first of a window in full, the rest as a count,
 * the totals at stop.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mqtt from 'mqtt';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { BrokerRefusal, RefusalCounts } from '../../src/broker/refusal-log.js';
import { describeRefusal, reportRefusals } from '../../src/cli/broker-refusal-lines.js';
import { CliProcess } from '../helpers/cli-process.js';
import { eventually } from '../helpers/eventually.js';

describe('reportRefusals', () => {
  it('says the first refusal of a window in full, the rest of the window as one count, and the totals at stop', () => {
    vi.useFakeTimers();
    try {
      const counts: RefusalCounts = { connect: 0, publish: 0, subscribe: 0, 'packet-too-large': 0 };
      let listener: ((refusal: BrokerRefusal, counts: RefusalCounts) => void) | undefined;
      const broker = {
        onRefused: (l: typeof listener) => ((listener = l), () => (listener = undefined)),
        refusedCounts: () => ({ ...counts }),
      };
      const lines: string[] = [];
      const stop = reportRefusals(broker as never, (line) => lines.push(line), 1000);
      const refuse = (refusal: Omit<BrokerRefusal, 'at'>): void => {
        counts[refusal.kind]++;
        listener?.({ ...refusal, at: new Date().toISOString() }, { ...counts });
      };
      refuse({ kind: 'publish', identity: 'station:PM-1', clientId: 'station-sim-PM-1', topic: 'stations/PM-2/status', reason: 'not its topic' });
      for (let i = 0; i < 5; i++) refuse({ kind: 'subscribe', identity: 'station:PM-1', topic: '#', reason: 'not its topic' });
      expect(lines).toEqual(['broker: refused publish by station:PM-1 (client station-sim-PM-1) to stations/PM-2/status: not its topic']);
      vi.advanceTimersByTime(1000);
      expect(lines[1]).toBe('broker: refused 5 (subscribe 5) more in the last 1 s');
      // A quiet window says nothing; the next refusal opens a new one.
      vi.advanceTimersByTime(5000);
      expect(lines).toHaveLength(2);
      refuse({ kind: 'connect', clientId: 'x', reason: 'bad user name or password' });
      expect(lines[2]).toBe('broker: refused connect by an unauthenticated client (client x): bad user name or password');
      stop();
      expect(lines[3]).toBe('broker: refused 7 (connect 1, publish 1, subscribe 5) in all');
      expect(lines).toHaveLength(4);
    } finally {
      vi.useRealTimers();
    }
  });

  it('says nothing at stop when nothing was refused', () => {
    const lines: string[] = [];
    const stop = reportRefusals({ onRefused: () => () => undefined, refusedCounts: () => ({ connect: 0, publish: 0, subscribe: 0, 'packet-too-large': 0 }) }, (line) => lines.push(line));
    stop();
    expect(lines).toEqual([]);
  });

  it('describes a refusal without a client id or topic', () => {
    expect(describeRefusal({ kind: 'packet-too-large', reason: 'packet over 65536 bytes', at: '' })).toBe('refused packet-too-large by a client: packet over 65536 bytes');
  });
});

describe('station-sim broker with authentication', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'broker-refusals-'));
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('tells on stderr that it refused an anonymous client, and the totals at stop', async () => {
    const fixture = join(dir, 'fixture.json');
    await writeFile(fixture, JSON.stringify({ stations: [{ token: 'BR-1', stationId: 1, locks: [{ lockId: '1' }] }], mqtt: { broker: { auth: true } } }));
    const cli = new CliProcess(['broker', '--fixture', fixture, '--mqtt-port', '0', '--json']);
    const ready = await cli.readyJson();
    await expect(mqtt.connectAsync(ready.mqttUrl as string, { reconnectPeriod: 0, connectTimeout: 5000, protocolVersion: 4, clientId: 'anonymous-probe' }, false)).rejects.toThrow();
    await eventually(() => expect(cli.stderr).toMatch(/station-sim: broker: refused connect by an unauthenticated client \(client anonymous-probe\): .+/));
    cli.child.kill('SIGTERM');
    expect(await cli.exited).toBe(0);
    expect(cli.stderr).toContain('station-sim: broker: refused 1 (connect 1) in all');
  });
});
