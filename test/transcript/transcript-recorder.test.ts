import { closeSync, constants, existsSync, openSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EventHub } from '../../src/control/event-hub.js';
import { parseFixture } from '../../src/fixture/load-fixture.js';
import { ManualClock } from '../../src/shared/clock.js';
import { commandChain } from '../../src/transcript/transcript-format.js';
import { readTranscript } from '../helpers/read-transcript.js';
import { startTranscript } from '../../src/transcript/transcript-recorder.js';
import { eventually } from '../helpers/eventually.js';

const fixture = parseFixture({
  defaults: { heartbeatMs: 0, topics: { lockState: '{prefix}/{token}/lock/{lockId}' } },
  api: { accessTokenTtlSeconds: 3600, refreshTokenTtlSeconds: 86400, commandTimeoutMs: 300 },
  stations: [{ token: 'SC-1', stationId: 1, locks: [{ lockId: '1' }] }],
});
const json = (value: unknown): Buffer => Buffer.from(JSON.stringify(value));

describe('transcript recorder', () => {
  it('records what a command chain needs: the message kind, and the command of faults and timeouts', async () => {
    const clock = new ManualClock();
    const hub = new EventHub({ fixture, clock });
    const path = join(await mkdtemp(join(tmpdir(), 'transcript-')), 't.jsonl');
    const transcript = await startTranscript({ path, hub, clock });
    hub.handleMessage('stations/SC-1/locks/1/unlock', json({ commandId: 'c-1' }));
    hub.handleMessage('station-sim/events/SC-1', json({ fault: 'dropCommands', lockId: '1', commandId: 'c-1' }));
    clock.advance(300);
    hub.handleMessage('stations/SC-1/locks/1/unlock', json({ commandId: 'c-2' }));
    hub.handleMessage('stations/SC-1/acks', json({ commandId: 'c-2', lockId: '1', accepted: true }));
    hub.handleMessage('stations/SC-1/lock/1', json({ lockId: '1', status: 'unlocked', lastUpdated: new Date(clock.now()).toISOString() }));
    await transcript.stop();
    hub.stop();

    const { entries, skipped } = await readTranscript(await readFile(path, 'utf8'));
    expect(skipped).toBe(0);
    expect(entries.find((e) => e.kind === 'sim' && e.event === 'fault')).toMatchObject({ station: 'SC-1', lockId: '1', commandId: 'c-1' });
    expect(entries.find((e) => e.kind === 'sim' && e.event === 'timeout')).toMatchObject({ station: 'SC-1', lockId: '1', commandId: 'c-1' });
    expect(entries.filter((e) => e.kind === 'mqtt').map((e) => e.kind === 'mqtt' && e.message)).toEqual(['unlock', 'unlock', 'acks', 'lockState']);
    expect(commandChain(entries, 'c-1').map((e) => (e.kind === 'sim' ? e.event : e.kind))).toEqual(['mqtt', 'fault', 'timeout']);
    expect(commandChain(entries, 'c-2').map((e) => (e.kind === 'mqtt' ? e.message : e.kind))).toEqual(['unlock', 'acks', 'lockState']);
  });

  it('records every field of a request as its event has it, the station token as `station`', async () => {
    const clock = new ManualClock();
    const hub = new EventHub({ fixture, clock });
    const path = join(await mkdtemp(join(tmpdir(), 'transcript-')), 't.jsonl');
    const transcript = await startTranscript({ path, hub, clock });
    const route = '/v1/stations/:station_token/locks/:lock_id/unlock';
    hub.request({ method: 'POST', route, status: 200, ms: 5, token: 'SC-1', lockId: '1', outcome: 'accepted', commandId: 'c-1', fault: 'api-1' });
    await transcript.stop();
    hub.stop();

    const text = await readFile(path, 'utf8');
    // The fields of an API entry are in the order files have always had them.
    expect(text.split('\n')[0]).toBe(
      `{"t":"2026-01-01T00:00:00.000Z","kind":"api","method":"POST","route":"${route}","status":200,"ms":5,"station":"SC-1","lockId":"1","outcome":"accepted","commandId":"c-1","fault":"api-1"}`,
    );
    const { entries, skipped } = await readTranscript(text);
    expect(skipped).toBe(0);
  });

  it('refuses a file it cannot open with an error that says why, not a bare ENOENT', async () => {
    const clock = new ManualClock();
    const hub = new EventHub({ fixture, clock });
    const dir = await mkdtemp(join(tmpdir(), 'transcript-'));
    const path = join(dir, 'missing', 't.jsonl');
    await expect(startTranscript({ path, hub, clock })).rejects.toMatchObject({
      name: 'SimError',
      code: 'BAD_REQUEST',
      message: `cannot record the transcript to ${path}: its directory does not exist (ENOENT)`,
    });
    await expect(startTranscript({ path: dir, hub, clock })).rejects.toMatchObject({ message: `cannot record the transcript to ${dir}: it is a directory (EISDIR)` });
    hub.stop();
  });

  // /dev/full fails every write with ENOSPC, as a full disk does.
  it.runIf(existsSync('/dev/full'))('reports the first write error once, naming the file, and stops recording', async () => {
    const clock = new ManualClock();
    const hub = new EventHub({ fixture, clock });
    const notices: string[] = [];
    const transcript = await startTranscript({ path: '/dev/full', hub, clock, onNotice: (message) => notices.push(message) });
    hub.emit({ type: 'control', action: 'reset' });
    await eventually(() => expect(notices).toHaveLength(1));
    expect(notices[0]).toMatch(/^transcript \/dev\/full could not be written \(ENOSPC\b.*recording stopped/);
    // Recording has stopped: the hub has no listener of the transcript left.
    expect(hub.listening).toBe(false);
    hub.handleMessage('stations/SC-1/status', json({ stationId: 1, status: 'online', batteryVoltage: 12, lastConnection: 'x' }));
    await transcript.stop();
    // No wait to see that no second notice comes: stop() has resolved, the one 'error' listener of
    // the destroyed file has fired, and nothing is left that writes or reports.
    expect(notices).toHaveLength(1);
    hub.stop();
  });

  it('stops recording with a notice once the file falls too far behind, instead of holding every entry in memory', async () => {
    const clock = new ManualClock();
    const hub = new EventHub({ fixture, clock });
    // A pipe whose reader never reads stands in for a disk slower than the simulator.
    const path = join(await mkdtemp(join(tmpdir(), 'transcript-')), 'slow.fifo');
    execFileSync('mkfifo', [path]);
    const reader = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
    const notices: string[] = [];
    const transcript = await startTranscript({ path, hub, clock, maxPendingBytes: 200_000, onNotice: (message) => notices.push(message) });
    const padding = 'x'.repeat(1000);
    for (let i = 0; i < 1000 && hub.listening; i += 1) hub.emit({ type: 'control', action: `event ${i} ${padding}` });
    expect(notices).toEqual([`transcript ${path} fell more than 0.2 MiB behind (the disk or pipe is slower than the simulator); recording stopped, the file ends before this point`]);
    expect(hub.listening).toBe(false);
    closeSync(reader); // the blocked write now fails, and the stream closes
    await transcript.stop();
    expect(notices).toHaveLength(1);
    hub.stop();
  });
});
