/**
 * What a transcript keeps for the judge (docs/judge.md, "Where findings show"): findings as `judge`
 * entries, the fixture's judge settings, and on each unlock a station received, what it saw of the
 * delivery; and the offline replay (src/transcript/transcript-judge.ts) that judges those entries
 * again as the live judge did.
 */
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EventHub } from '../../src/control/event-hub.js';
import { parseFixture } from '../../src/fixture/load-fixture.js';
import { ManualClock } from '../../src/shared/clock.js';
import { ServiceJudge, type ReceivedCommand } from '../../src/judge/service-judge.js';
import type { JudgeFinding } from '../../src/judge/judge-log.js';
import { readUnlockCommand } from '../../src/mqtt/station-client.js';
import { startTranscript } from '../../src/transcript/transcript-recorder.js';
import { entryHasKind, formatEntry, parseEntry, type TranscriptEntry } from '../../src/transcript/transcript-format.js';
import { judgeTranscript } from '../../src/transcript/transcript-judge.js';
import { readTranscript } from '../helpers/read-transcript.js';
import { expectJudgeFindings } from '../helpers/judge-findings.js';

expectJudgeFindings('breaks service rules on purpose, to see the findings recorded');

const fixture = parseFixture({
  defaults: { heartbeatMs: 0 },
  stations: [
    { token: 'J-1', stationId: 1, locks: [{ lockId: '1' }] },
    { token: 'J-2', stationId: 2, locks: [{ lockId: '1' }] },
  ],
});
const START = Date.parse('2026-03-01T00:00:00.000Z');

/** A command as the fleet hands it to the judge and the recorder (start-fleet.ts `onCommand`). */
function received(clock: ManualClock, token: string, lockId: string, payload: string, extra: Partial<ReceivedCommand> = {}): ReceivedCommand {
  const bytes = Buffer.from(payload);
  return {
    token,
    lockId,
    qos: 1,
    retain: false,
    payload: bytes,
    command: readUnlockCommand(bytes),
    now: clock.now(),
    online: true,
    onlineSince: START,
    locks: [{ lockId: '1' }],
    commandTtlMs: 30_000,
    ...extra,
  };
}

describe('a transcript for the judge', () => {
  it('records deliveries and findings, and judging it offline finds what the live judge found', async () => {
    const clock = Object.assign(new ManualClock(START), { manual: true });
    const hub = new EventHub({ fixture, clock });
    const path = join(await mkdtemp(join(tmpdir(), 'transcript-')), 't.jsonl');
    const settings = { rules: { 'service.command-rate': { maxCommands: 2, windowMs: 1000 } } };
    // Only J-1's fleet runs in the recording process: J-2's unlocks are the broker's copies.
    const transcript = await startTranscript({ path, hub, clock, fleetStations: fixture.stations.filter((s) => s.token === 'J-1'), judge: settings });
    const live: JudgeFinding[] = [];
    const judge = new ServiceJudge({ settings, onFinding: (finding) => live.push(finding) });
    const deliver = (command: ReceivedCommand): void => {
      judge.observe(command);
      transcript.recordCommand(command);
      // The broker's copy of the same publication, which the recorder leaves out for J-1.
      hub.handleMessage(`stations/${command.token}/locks/${command.lockId}/unlock`, command.payload);
    };
    const sentAt = (): string => new Date(clock.now()).toISOString();
    deliver(received(clock, 'J-1', '1', JSON.stringify({ commandId: 'q', sentAt: sentAt() }), { qos: 0 }));
    deliver(received(clock, 'J-1', '9', JSON.stringify({ commandId: 'l', sentAt: sentAt() }), { locks: [{ lockId: '1' }] }));
    // Not JSON (recorded as its text, which gives the bytes back), and JSON written with spaces (its bytes kept in `raw`).
    deliver(received(clock, 'J-1', '1', 'open \u0001 sesame'));
    deliver(received(clock, 'J-1', '1', '{ "commandId": "s", "sentAt": "2026-02-28T23:00:00.000Z" }'));
    clock.advance(5000);
    deliver(received(clock, 'J-1', '1', JSON.stringify({ commandId: 'r', sentAt: sentAt() }), { retain: true }));
    hub.handleMessage('stations/J-2/locks/1/unlock', Buffer.from(JSON.stringify({ commandId: 'other', sentAt: sentAt() })));
    for (const finding of live) hub.emit({ type: 'judge.finding', ...finding });
    await transcript.stop();
    hub.stop();

    const { entries, skipped } = await readTranscript(await readFile(path, 'utf8'));
    expect(skipped).toBe(0);
    expect(entries[0]).toMatchObject({ kind: 'sim', event: 'judge-settings', settings, detail: 'rules {"service.command-rate":{"maxCommands":2,"windowMs":1000}}' });
    const unlocks = entries.filter((e) => e.kind === 'mqtt' && e.message === 'unlock');
    // One entry per delivery to J-1 (no broker copies), and J-2's broker copy without a delivery.
    expect(unlocks.map((e) => e.kind === 'mqtt' && [e.station, e.delivery !== undefined])).toEqual([
      ['J-1', true],
      ['J-1', true],
      ['J-1', true],
      ['J-1', true],
      ['J-1', true],
      ['J-2', false],
    ]);
    expect(unlocks[0]).toMatchObject({ delivery: { qos: 0, retain: false, online: true, onlineSince: new Date(START).toISOString(), commandTtlMs: 30_000, knownLock: true } });
    expect(unlocks[1]).toMatchObject({ lockId: '9', delivery: { knownLock: false } });
    expect(unlocks[2]).toMatchObject({ payload: 'open \u0001 sesame' });
    expect((unlocks[2] as { delivery: { raw?: string } }).delivery.raw).toBeUndefined();
    expect((unlocks[3] as { delivery: { raw?: string } }).delivery.raw).toBe(Buffer.from('{ "commandId": "s", "sentAt": "2026-02-28T23:00:00.000Z" }').toString('base64'));
    expect((unlocks[0] as { delivery: { raw?: string } }).delivery.raw).toBeUndefined();
    expect(formatEntry(unlocks[4]!, START)).toMatch(/\(retained\)$/);
    expect(formatEntry(unlocks[0]!, START)).toMatch(/\(QoS 0\)$/);

    const judged = entries.filter((e) => e.kind === 'judge');
    expect(judged.map((e) => e.kind === 'judge' && e.rule)).toEqual(live.map((f) => f.rule));
    expect(judged.every((e) => entryHasKind(e, new Set(['judge'])))).toBe(true);

    const replay = await judgeTranscript(entries);
    expect(replay.settingsSource).toBe('transcript');
    expect(replay.judged).toBe(5);
    expect(replay.unjudgeable).toBe(1);
    // The live judge and the replay agree finding for finding: rule, station, lock, command, detail, time.
    expect(replay.findings).toEqual(live);
    expect(Object.keys(replay.summary).sort()).toEqual(
      ['service.qos0-command', 'service.unknown-lock', 'service.bad-payload', 'service.stale-sent-at', 'service.command-rate', 'service.retained-command'].sort(),
    );
    expect(replay.recorded).toEqual(replay.summary);

    // Judged by other settings (`--fixture`): the rule switched off is not found.
    const relaxed = await judgeTranscript(entries, { settings: { rules: { 'service.qos0-command': { enabled: false } } } });
    expect(relaxed.settingsSource).toBe('given');
    expect(relaxed.summary['service.qos0-command']).toBeUndefined();
    // The default rate (10 a second) is not broken by these five.
    expect(relaxed.summary['service.command-rate']).toBeUndefined();
  });

  it('says a transcript cannot be judged rather than guess: no delivery recorded, or settings it does not know', async () => {
    const older: TranscriptEntry[] = [
      { t: '2026-03-01T00:00:00.000Z', kind: 'mqtt', direction: 'down', station: 'J-1', lockId: '1', topic: 'stations/J-1/locks/1/unlock', payload: { commandId: 'c' }, commandId: 'c' },
    ];
    const replay = await judgeTranscript(older);
    expect(replay).toMatchObject({ judged: 0, unjudgeable: 1, settingsSource: 'defaults', summary: {} });

    const unknown: TranscriptEntry = { t: '2026-03-01T00:00:00.000Z', kind: 'sim', event: 'judge-settings', detail: '', settings: { rules: { 'client.no-such-rule': {} } } };
    await expect(judgeTranscript([unknown, ...older])).rejects.toMatchObject({ code: 'BAD_REQUEST', message: expect.stringContaining('give --fixture') });
    // With settings given, the recorded ones do not matter.
    await expect(judgeTranscript([unknown, ...older], { settings: {} })).resolves.toMatchObject({ settingsSource: 'given' });
  });

  it('reads and shows a finding by the evidence it has, a station or not', () => {
    const service = parseEntry(JSON.stringify({ t: '2026-03-01T00:00:01.000Z', kind: 'judge', rule: 'service.qos0-command', station: 'J-1', lockId: '1', commandId: 'q', detail: 'delivered at QoS 0' }));
    expect(formatEntry(service!, START)).toBe('   +1.000s  JUDGE service.qos0-command  J-1/1  command q: delivered at QoS 0');
    // A client rule's finding names an account and a request, no station; a field this reader does not know is kept.
    const client = parseEntry(
      JSON.stringify({ t: '2026-03-01T00:00:02.000Z', kind: 'judge', rule: 'client.token-in-query', party: 'client', account: 'ops@example.com', requestId: 'req-7', detail: 'access token in the query string', extra: 1 }),
    );
    expect(formatEntry(client!, START)).toBe('   +2.000s  JUDGE client.token-in-query  account ops@example.com  request req-7: access token in the query string');
    expect(parseEntry(JSON.stringify({ t: '2026-03-01T00:00:02.000Z', kind: 'judge', rule: 'x' }))).toBeUndefined();
  });
});
