/**
 * The service rules one by one (src/judge/service-judge.ts), on deliveries built by hand: the edges
 * a live run cannot pin down (a redelivery, the skew, a rule switched off, a burst told once).
 */
import { describe, expect, it } from 'vitest';
import type { JudgeSettings } from '../../src/fixture/judge-schema.js';
import type { JudgeFinding } from '../../src/judge/judge-log.js';
import { ServiceJudge, type ReceivedCommand } from '../../src/judge/service-judge.js';
import { readUnlockCommand } from '../../src/mqtt/station-client.js';

const NOW = Date.parse('2026-01-01T12:00:00.000Z');

function judged(settings: JudgeSettings = {}) {
  const findings: JudgeFinding[] = [];
  const judge = new ServiceJudge({ settings, onFinding: (finding) => findings.push(finding) });
  const deliver = (payload: object | string, over: Partial<ReceivedCommand> = {}) => {
    const bytes = Buffer.from(typeof payload === 'string' ? payload : JSON.stringify(payload));
    judge.observe({
      token: 'ST-1',
      lockId: '1',
      qos: 1,
      retain: false,
      payload: bytes,
      // Read as the station reads it before the judge sees it.
      command: readUnlockCommand(bytes),
      now: NOW,
      online: true,
      onlineSince: NOW - 60_000,
      locks: [{ lockId: '1' }, { lockId: '2' }],
      commandTtlMs: 30_000,
      ...over,
    });
  };
  return { findings, deliver, rules: () => findings.map((finding) => finding.rule) };
}
const sentAt = (offsetMs: number) => new Date(NOW + offsetMs).toISOString();

describe('the service judge', () => {
  it('finds nothing in a good command, nor in its redelivery', () => {
    const { deliver, findings } = judged();
    deliver({ commandId: 'c-1', sentAt: sentAt(-20) });
    deliver({ commandId: 'c-1', sentAt: sentAt(-20) }, { now: NOW + 500 });
    expect(findings).toEqual([]);
  });

  it('gives the evidence: time, station, lock, command and what was seen', () => {
    const { deliver, findings } = judged();
    deliver({ commandId: 'c-1', sentAt: sentAt(0) }, { qos: 0 });
    expect(findings).toEqual([
      { time: '2026-01-01T12:00:00.000Z', rule: 'service.qos0-command', token: 'ST-1', lockId: '1', commandId: 'c-1', detail: 'delivered at QoS 0; the contract is QoS 1' },
    ]);
  });

  it('tells a reused id from a redelivery: another lock or another sentAt', () => {
    const { deliver, rules } = judged();
    deliver({ commandId: 'c-1', sentAt: sentAt(0) });
    deliver({ commandId: 'c-1', sentAt: sentAt(0) }, { lockId: '2' });
    deliver({ commandId: 'c-1', sentAt: sentAt(10) });
    expect(rules()).toEqual(['service.command-id-reused', 'service.command-id-reused']);
  });

  it('judges sentAt against the TTL and the skew allowed', () => {
    const { deliver, rules } = judged({ rules: { 'service.future-sent-at': { skewMs: 500 }, 'service.unlock-storm': { enabled: false } } });
    deliver({ commandId: 'ttl-edge', sentAt: sentAt(-30_000) });
    deliver({ commandId: 'stale', sentAt: sentAt(-30_001) });
    deliver({ commandId: 'skew-edge', sentAt: sentAt(500) });
    deliver({ commandId: 'future', sentAt: sentAt(501) });
    deliver({ commandId: 'not-iso', sentAt: 'yesterday' });
    expect(rules()).toEqual(['service.stale-sent-at', 'service.future-sent-at', 'service.bad-payload']);
  });

  it('finds a command sent while the station was offline, beyond the skew, and one arriving while it is', () => {
    const { deliver, rules } = judged();
    deliver({ commandId: 'within-skew', sentAt: sentAt(-2000) }, { onlineSince: NOW });
    deliver({ commandId: 'queued', sentAt: sentAt(-2001) }, { onlineSince: NOW });
    deliver({ commandId: 'while-off', sentAt: sentAt(0) }, { online: false, onlineSince: undefined });
    expect(rules()).toEqual(['service.command-to-offline-station', 'service.command-to-offline-station']);
  });

  it('judges a retained command as retained only, and an empty retained message not at all', () => {
    const { deliver, rules } = judged();
    deliver({ commandId: 'old', sentAt: sentAt(-3_600_000) }, { retain: true, lockId: '9' });
    deliver('', { retain: true });
    expect(rules()).toEqual(['service.retained-command']);
  });

  it('finds payloads that are no command, and unknown locks', () => {
    const { deliver, rules } = judged();
    deliver('not json');
    deliver({ id: 'x' });
    deliver('x'.repeat(5000));
    deliver({ commandId: 'c-9', sentAt: sentAt(0) }, { lockId: '9' });
    expect(rules()).toEqual(['service.bad-payload', 'service.bad-payload', 'service.bad-payload', 'service.unknown-lock']);
  });

  it('tells a burst over the rate once, and again after the rate fell back', () => {
    const { deliver, findings } = judged({ rules: { 'service.command-rate': { maxCommands: 2, windowMs: 1000 }, 'service.unlock-storm': { enabled: false } } });
    for (let i = 0; i < 5; i += 1) deliver({ commandId: `a-${i}`, sentAt: sentAt(0) });
    deliver({ commandId: 'b-1', sentAt: sentAt(2000) }, { now: NOW + 2000 });
    for (let i = 0; i < 2; i += 1) deliver({ commandId: `b-${i + 2}`, sentAt: sentAt(2000) }, { now: NOW + 2000 });
    expect(findings.map((finding) => [finding.rule, finding.commandId])).toEqual([
      ['service.command-rate', 'a-2'],
      ['service.command-rate', 'b-3'],
    ]);
  });

  it('says nothing of a rule switched off', () => {
    const { deliver, findings } = judged({ rules: { 'service.qos0-command': { enabled: false } } });
    deliver({ commandId: 'c-1', sentAt: sentAt(0) }, { qos: 0 });
    expect(findings).toEqual([]);
  });
});
