import { describe, expect, it } from 'vitest';
import { CommandChain, commandChain, entryHasKind, entryIsAbout, formatTimeline, parseEntry, type TranscriptEntry } from '../../src/transcript/transcript-format.js';
import { ENTRY_KINDS } from '../../src/transcript/entry-kinds.js';
import { readTranscript } from '../helpers/read-transcript.js';

const at = (ms: number): string => new Date(Date.parse('2026-01-01T00:00:00.000Z') + ms).toISOString();

const unlock = (ms: number, commandId: string, lockId = '1'): TranscriptEntry => ({
  t: at(ms),
  kind: 'mqtt',
  direction: 'down',
  station: 'S',
  lockId,
  topic: `stations/S/locks/${lockId}/unlock`,
  message: 'unlock',
  payload: { commandId },
  commandId,
});
const lockState = (ms: number, status: string, topic = 'stations/S/locks/1/state', lockId = '1'): TranscriptEntry => ({
  t: at(ms),
  kind: 'mqtt',
  direction: 'up',
  station: 'S',
  lockId,
  topic,
  message: 'lockState',
  payload: { lockId, status },
});

describe('transcript entries', () => {
  it('accepts only entries of the right shape for their kind', async () => {
    const good = [
      '{"t":"2026-01-01T00:00:00.000Z","kind":"mqtt","direction":"up","station":"S","topic":"stations/S/status","payload":{"status":"online"}}',
      '{"t":"2026-01-01T00:00:00.000Z","kind":"api","method":"POST","route":"/v1/auth/login","status":200,"ms":3}',
      '{"t":"2026-01-01T00:00:00.000Z","kind":"sim","event":"control","detail":"reset"}',
      // Older files: no station, lock or outcome; a finding of a rule and a party this version does not have.
      '{"t":"2026-01-01T00:00:00.000Z","kind":"api","method":"POST","route":"/v1/stations/:station_token/locks/:lock_id/unlock","status":200}',
      '{"t":"2026-01-01T00:00:00.000Z","kind":"judge","rule":"service.gone","party":"broker","detail":"x"}',
    ];
    const bad = [
      '{"t":"2026-01-01T00:00:00.100Z","kind":"note","text":"hand-written"}',
      '{"t":"yesterday","kind":"sim","event":"control","detail":"x"}',
      '{"t":"2026-13-45T00:00:00.000Z","kind":"sim","event":"control","detail":"x"}',
      '{"t":"2026-01-01T00:00:00.200Z","kind":"mqtt","direction":"up","station":"S","lockId":"1","payload":{"status":"unlocked"}}',
      '{"t":"2026-01-01T00:00:00.200Z","kind":"mqtt","direction":"sideways","station":"S","topic":"x","payload":1}',
      '{"t":"2026-01-01T00:00:00.200Z","kind":"mqtt","direction":"up","station":"S","topic":"x"}',
      '{"t":"2026-01-01T00:00:00.000Z","kind":"api","method":"POST","route":"/v1","status":"200","ms":3}',
      '{"t":"2026-01-01T00:00:00.000Z","kind":"sim","event":"fault","station":7,"detail":"x"}',
      '{"t":"2026-01-01T00:00:00.000Z","kind":"sim","event":"fault","commandId":1,"detail":"x"}',
      // Every field an entry takes from its event is checked, `client` and `route` of a finding too.
      '{"t":"2026-01-01T00:00:00.000Z","kind":"api","method":"POST","route":"/v1","status":200,"fault":1}',
      '{"t":"2026-01-01T00:00:00.000Z","kind":"judge","rule":"client.token-in-query","route":7,"detail":"x"}',
      '[1,2]',
      'not json',
    ];
    for (const line of good) expect(parseEntry(line), line).toBeDefined();
    for (const line of bad) expect(parseEntry(line), line).toBeUndefined();
    const { entries, skipped } = await readTranscript([...good, '', ...bad].join('\n'));
    expect(entries).toHaveLength(good.length);
    expect(skipped).toBe(bad.length);
    expect(formatTimeline(entries).join('\n')).not.toMatch(/undefined|NaN/);
  });

  it('escapes C0, DEL and C1 control characters in every printed field', () => {
    const evil = 'x\u001b[2J\u001b]0;pwned\u0007\u007f\u009b31m\r\n';
    const entries: TranscriptEntry[] = [
      { t: at(0), kind: 'mqtt', direction: 'up', station: evil, lockId: evil, topic: `stations/${evil}/status`, payload: { status: evil } },
      { t: at(1), kind: 'api', method: evil, route: `/v1/${evil}`, status: 404, ms: 1, commandId: evil },
      { t: at(2), kind: 'sim', event: evil, station: evil, detail: evil },
    ];
    const lines = formatTimeline(entries);
    expect(lines).toHaveLength(3);
    for (const line of lines) {
      expect(line).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
      expect(line).toContain('\\u001b[2J');
    }
    expect(lines[0]).toContain('\\u007f\\u009b31m');
    expect(lines[2]).toContain('\\u000d\\u000a');
  });
});

describe('command chains', () => {
  it('includes fault and timeout entries by their commandId field, and by their detail in older files', () => {
    const entries: TranscriptEntry[] = [
      unlock(0, 'c-1'),
      { t: at(2), kind: 'sim', event: 'fault', station: 'S', detail: 'dropCommands lock 1 command c-1', lockId: '1', commandId: 'c-1' },
      { t: at(300), kind: 'sim', event: 'timeout', station: 'S', detail: 'no ack for command c-1 after 300 ms', lockId: '1', commandId: 'c-1' },
      { t: at(301), kind: 'api', method: 'POST', route: '/v1/stations/:station_token/locks/:lock_id/unlock', status: 200, ms: 301, commandId: 'c-1' },
    ];
    expect(commandChain(entries, 'c-1').map((e) => (e.kind === 'sim' ? e.event : e.kind))).toEqual(['mqtt', 'fault', 'timeout', 'api']);
    // A file from before commandId was recorded on sim entries.
    const old = entries.map((e) => (e.kind === 'sim' ? { t: e.t, kind: e.kind, event: e.event, station: e.station, detail: e.detail } : e));
    expect(commandChain(old, 'c-1').map((e) => (e.kind === 'sim' ? e.event : e.kind))).toEqual(['mqtt', 'fault', 'timeout', 'api']);
    expect(commandChain(old, 'c-10')).toEqual([]);
  });

  it('finds lock states by the recorded message kind, whatever the topic template', () => {
    const entries: TranscriptEntry[] = [
      unlock(0, 'c-1'),
      lockState(30, 'unlocked', 'stations/S/lock/1'),
      lockState(130, 'locked', 'stations/S/lock/1'),
      lockState(131, 'unlocked', 'stations/S/lock/2', '2'),
    ];
    const chain = commandChain(entries, 'c-1');
    expect(chain.map((e) => e.t)).toEqual([at(0), at(30), at(130)]);
  });

  it('falls back to the /state topic ending for files without message kinds', () => {
    const entries = [unlock(0, 'c-1'), lockState(30, 'unlocked'), lockState(130, 'locked')].map((e) => {
      const { message: _, ...rest } = e as Extract<TranscriptEntry, { kind: 'mqtt' }>;
      return rest;
    });
    expect(commandChain(entries, 'c-1')).toHaveLength(3);
  });

  it('keeps following a redelivered command, and stops at the next different command for the lock', () => {
    const entries: TranscriptEntry[] = [
      lockState(0, 'locked'),
      unlock(10, 'c-1'),
      unlock(12, 'c-1'),
      lockState(60, 'unlocked'),
      lockState(160, 'locked'),
      unlock(200, 'c-2'),
      lockState(260, 'unlocked'),
    ];
    expect(commandChain(entries, 'c-1').map((e) => e.t)).toEqual([at(10), at(12), at(60), at(160)]);
    expect(commandChain(entries, 'c-2').map((e) => e.t)).toEqual([at(200), at(260)]);
  });

  it('keeps only the chain while entries stream past', () => {
    const chain = new CommandChain('c-1');
    for (let i = 0; i < 10_000; i += 1) chain.add({ t: at(i), kind: 'mqtt', direction: 'up', station: `F-${i}`, topic: `stations/F-${i}/status`, message: 'status', payload: {} });
    chain.add(unlock(10_000, 'c-1'));
    for (let i = 0; i < 10_000; i += 1) chain.add(lockState(10_001 + i, 'locked', 'stations/S/locks/2/state', '2'));
    chain.add(lockState(30_000, 'unlocked'));
    expect(chain.entries.map((e) => e.t)).toEqual([at(10_000), at(30_000)]);
  });
});

describe('entry kinds and stations', () => {
  const at = '2026-01-01T00:00:00.000Z';
  const old = (topic: string, direction: 'up' | 'down'): TranscriptEntry => ({ t: at, kind: 'mqtt', direction, station: 'S', topic, payload: {} });

  it('reads the contract message of entries from files that did not record it', () => {
    const kindsOf = (entry: TranscriptEntry) => ENTRY_KINDS.filter((kind) => entryHasKind(entry, new Set([kind])));
    expect(kindsOf(old('stations/S/status', 'up'))).toEqual(['mqtt', 'status']);
    expect(kindsOf(old('stations/S/locks/1/state', 'up'))).toEqual(['mqtt', 'lockState']);
    expect(kindsOf(old('stations/S/acks', 'up'))).toEqual(['mqtt', 'acks']);
    expect(kindsOf(old('stations/S/locks/1/unlock', 'down'))).toEqual(['mqtt', 'unlock']);
    expect(kindsOf(old('site/S/whatever', 'up'))).toEqual(['mqtt']);
    expect(kindsOf({ t: at, kind: 'sim', event: 'timeout', station: 'S', detail: 'x' })).toEqual(['sim', 'timeout']);
    expect(kindsOf({ t: at, kind: 'api', method: 'GET', route: '/v1/x', status: 200 })).toEqual(['api']);
  });

  it('keeps fleet-wide sim entries for any station, and API entries only with their station', () => {
    const stations = new Set(['S']);
    expect(entryIsAbout({ t: at, kind: 'sim', event: 'control', detail: 'reset' }, stations)).toBe(true);
    expect(entryIsAbout({ t: at, kind: 'api', method: 'POST', route: '/v1/auth/login', status: 200 }, stations)).toBe(false);
    expect(entryIsAbout({ t: at, kind: 'api', method: 'GET', route: '/v1/stations/:station_token', status: 200, station: 'S' }, stations)).toBe(true);
    expect(entryIsAbout({ ...old('stations/T/status', 'up'), station: 'T' } as TranscriptEntry, stations)).toBe(false);
    expect(entryIsAbout(old('stations/S/status', 'up'), stations)).toBe(true);
  });
});
