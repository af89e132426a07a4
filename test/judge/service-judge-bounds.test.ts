/**
 * The service judge's memory is bounded (src/judge/service-judge.ts): the rate window holds only the
 * last `maxCommands + 1` arrival times however long it is, and the command ids remembered for
 * `service.command-id-reused` are capped over all stations together, oldest forgotten first.
 * `judge.enabled: false` makes it observe nothing.
 */
import { describe, expect, it } from 'vitest';
import type { JudgeSettings } from '../../src/fixture/judge-schema.js';
import type { JudgeFinding } from '../../src/judge/judge-log.js';
import { ServiceJudge, type ReceivedCommand } from '../../src/judge/service-judge.js';
import { readUnlockCommand } from '../../src/mqtt/station-client.js';

const NOW = Date.parse('2026-01-01T12:00:00.000Z');

function judged(settings: JudgeSettings = {}, maxRememberedCommands?: number) {
  const findings: JudgeFinding[] = [];
  const judge = new ServiceJudge({ settings, onFinding: (finding) => findings.push(finding), ...(maxRememberedCommands === undefined ? {} : { maxRememberedCommands }) });
  const deliver = (token: string, commandId: string, over: Partial<ReceivedCommand> = {}) => {
    const now = over.now ?? NOW;
    const bytes = Buffer.from(JSON.stringify({ commandId, sentAt: new Date(now).toISOString() }));
    judge.observe({ token, lockId: '1', qos: 1, retain: false, payload: bytes, command: readUnlockCommand(bytes), now, online: true, onlineSince: NOW - 60_000, locks: [{ lockId: '1' }, { lockId: '2' }], commandTtlMs: 30_000, ...over });
  };
  return { judge, findings, deliver, rules: () => findings.map((finding) => finding.rule) };
}

describe("the service judge's memory", () => {
  it('keeps at most maxCommands + 1 arrival times per station, even with an hour-long window, and still finds the burst', () => {
    const { judge, deliver, rules } = judged({ rules: { 'service.command-rate': { maxCommands: 5, windowMs: 3_600_000 } } });
    // One command a second for 1000 s: all inside the window, 995 of them over the rate.
    for (let n = 0; n < 1000; n += 1) deliver('ST-1', `c-${n}`, { now: NOW + n * 1000 });
    expect(judge.heldArrivals).toBe(6);
    // Told once for the whole burst.
    expect(rules()).toEqual(['service.command-rate']);
  });

  it('forgets arrivals that left the window, and tells a new burst again', () => {
    const { deliver, rules } = judged({ rules: { 'service.command-rate': { maxCommands: 2, windowMs: 1000 } } });
    for (const [n, at] of [0, 10, 20, 2000, 3000, 4000, 4010, 4020].entries()) deliver('ST-1', `c-${n}`, { now: NOW + at });
    expect(rules()).toEqual(['service.command-rate', 'service.command-rate']);
  });

  it('remembers at most the cap of command ids over all stations, the oldest forgotten first', () => {
    const { judge, deliver, rules } = judged({ rules: { 'service.command-rate': { enabled: false }, 'service.unlock-storm': { enabled: false } } }, 100);
    // Ids unique over all stations: an id is remembered once, whatever the station (a reuse at another station is one).
    for (let station = 0; station < 50; station += 1) for (let n = 0; n < 10; n += 1) deliver(`ST-${station}`, `c-${station}-${n}`, { now: NOW + station });
    expect(judge.rememberedCommands).toBe(100);
    // The newest are still known: the same id for another lock is a reuse.
    deliver('ST-49', 'c-49-9', { lockId: '2', now: NOW + 49 });
    expect(rules()).toEqual(['service.command-id-reused']);
    // The oldest station's ids were forgotten: no finding (a judge that forgets may miss, never invent).
    deliver('ST-0', 'c-0-0', { lockId: '2', now: NOW + 49 });
    expect(rules()).toEqual(['service.command-id-reused']);
    expect(judge.rememberedCommands).toBe(100);
  });

  it('the same command id at two stations is a reuse: ids are unique over the fleet', () => {
    const { deliver, findings } = judged();
    deliver('ST-1', 'same');
    deliver('ST-2', 'same');
    expect(findings).toMatchObject([{ rule: 'service.command-id-reused', token: 'ST-2', commandId: 'same' }]);
    expect(findings[0]!.detail).toContain('station ST-1');
  });

  it('observes nothing with judge.enabled false', () => {
    const { judge, deliver, findings } = judged({ enabled: false });
    expect(judge.enabled).toBe(false);
    deliver('ST-1', 'c-1', { qos: 0 });
    deliver('ST-1', 'c-1', { lockId: '9', retain: true });
    expect(findings).toEqual([]);
    expect(judge.rememberedCommands).toBe(0);
    expect(judge.heldArrivals).toBe(0);
  });
});
