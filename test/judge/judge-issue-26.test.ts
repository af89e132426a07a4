/**
 * A judge you can fail a build on: misdeeds the judge now reports with their rule ids, findings that
 * blame the party that did it, and reports people can act on (docs/judge.md).
 */
import { describe, expect, it } from 'vitest';
import { XMLParser } from 'fast-xml-parser';
import type { JudgeSettings } from '../../src/fixture/judge-schema.js';
import type { JudgeFinding } from '../../src/judge/judge-log.js';
import { ServiceJudge, type ReceivedCommand } from '../../src/judge/service-judge.js';
import { ClientJudge, LOGIN_ROUTE, UNLOCK_ROUTE, type ClientObservation } from '../../src/judge/client-judge.js';
import { JUDGE_RULES } from '../../src/judge/rule-catalogue.js';
import { judgeJunitXml } from '../../src/judge/junit-report.js';
import { enabledRules, formatFinding } from '../../src/judge/verdict.js';
import { readUnlockCommand } from '../../src/mqtt/station-client.js';
import { tokenInQuery } from '../../src/service/http/client-judging.js';
import { ControlClient, createClient } from '../../src/client/index.js';
import { startSimulator, timeScaleNotice } from '../../src/simulator/start-simulator.js';
import { expectJudgeFindings } from '../helpers/judge-findings.js';

expectJudgeFindings('a /v1 client fires a burst of unlocks on purpose');

const NOW = Date.parse('2026-01-01T12:00:00.000Z');

function serviceJudge(settings: JudgeSettings = {}) {
  const findings: JudgeFinding[] = [];
  const judge = new ServiceJudge({ settings, onFinding: (finding) => findings.push(finding) });
  const deliver = (payload: object | string, over: Partial<ReceivedCommand> = {}): void => {
    const bytes = Buffer.from(typeof payload === 'string' ? payload : JSON.stringify(payload));
    judge.observe({
      token: 'ST-1', lockId: '1', qos: 1, retain: false, payload: bytes, command: readUnlockCommand(bytes),
      now: NOW, online: true, onlineSince: NOW - 60_000, locks: [{ lockId: '1' }, { lockId: '2' }], commandTtlMs: 30_000, ...over,
    });
  };
  return { judge, findings, deliver, rules: () => findings.map((finding) => finding.rule) };
}
const sentAt = new Date(NOW).toISOString();

describe('service rules', () => {
  it('a command without sentAt, or with fields the contract does not have, is a bad payload', () => {
    const { deliver, findings } = serviceJudge();
    deliver({ commandId: 'no-sent-at' });
    deliver({ commandId: 'extra', sentAt, action: 'lock' });
    expect(findings.map((finding) => [finding.rule, finding.commandId])).toEqual([
      ['service.bad-payload', 'no-sent-at'],
      ['service.bad-payload', 'extra'],
    ]);
    expect(findings[0]!.detail).toMatch(/^no sentAt/);
    expect(findings[1]!.detail).toContain('"action"');
  });

  it('a command id used again at another station is a reuse', () => {
    const { deliver, findings } = serviceJudge();
    deliver({ commandId: 'same', sentAt });
    deliver({ commandId: 'same', sentAt }, { token: 'ST-2' });
    expect(findings).toMatchObject([{ rule: 'service.command-id-reused', token: 'ST-2', commandId: 'same' }]);
  });

  it('five unlocks of one lock within 300 ms with fresh ids are a retry storm, told once; four, or a redelivery, are not', () => {
    const { deliver, rules, findings } = serviceJudge();
    for (let n = 0; n < 4; n += 1) deliver({ commandId: `r-${n}`, sentAt }, { now: NOW + n * 70 });
    deliver({ commandId: 'r-3', sentAt }, { now: NOW + 280 });
    expect(rules()).toEqual([]);
    deliver({ commandId: 'r-4', sentAt }, { now: NOW + 290 });
    deliver({ commandId: 'r-5', sentAt }, { now: NOW + 295 });
    expect(rules()).toEqual(['service.unlock-storm']);
    expect(findings[0]).toMatchObject({ token: 'ST-1', lockId: '1', commandId: 'r-4' });
  });

  it("blames nothing on station-sim's own gateway", () => {
    const { deliver, findings } = serviceJudge({ rules: { 'service.command-rate': { maxCommands: 2 } } });
    for (let n = 0; n < 20; n += 1) deliver({ commandId: `gw-${n}`, sentAt }, { fromGateway: true });
    expect(findings).toEqual([]);
  });

  it('says what it found of a retained command at stop, and escapes what a backend put in a bad payload', () => {
    const { judge, deliver, findings } = serviceJudge();
    const bytes = Buffer.from(JSON.stringify({ commandId: 'held', sentAt }));
    judge.observeRetainedAtStop({ token: 'ST-1', lockId: '1', qos: 1, retain: true, payload: bytes, command: readUnlockCommand(bytes), now: NOW, online: true, onlineSince: undefined, locks: [{ lockId: '1' }], commandTtlMs: 30_000 });
    deliver('oops\n2026 forged line');
    expect(findings[0]!.detail).toMatch(/^still held retained by the broker at stop/);
    expect(findings[1]!.rule).toBe('service.bad-payload');
    expect(formatFinding(findings[1]!)).not.toContain('\n');
  });
});

describe('client rules', () => {
  const observe = (judge: ClientJudge, arrival: number, over: Partial<ClientObservation>): void =>
    judge.observe({ time: NOW + arrival, requestId: `req-${arrival}`, arrival, arrivalsAtAnswer: arrival, receivedAt: NOW + arrival, method: 'POST', status: 200, client: '10.0.0.7', ...over });

  it('login-burst names the address, not one account of the many that logged in from it', () => {
    const findings: JudgeFinding[] = [];
    const judge = new ClientJudge({ settings: {}, onFinding: (finding) => findings.push(finding) });
    for (let n = 1; n <= 12; n += 1) observe(judge, n, { route: LOGIN_ROUTE, account: `user${n}@example.com` });
    expect(findings.map((finding) => finding.rule)).toEqual(['client.login-burst']);
    expect(findings[0]).not.toHaveProperty('account');
    expect(findings[0]).toMatchObject({ client: '10.0.0.7', route: `POST ${LOGIN_ROUTE}` });
  });

  it('a burst of unlocks of one station from one address is the client\'s', () => {
    const findings: JudgeFinding[] = [];
    const judge = new ClientJudge({ settings: {}, onFinding: (finding) => findings.push(finding) });
    for (let n = 1; n <= 20; n += 1) observe(judge, n, { route: UNLOCK_ROUTE, account: 'a@example.com', station: 'S-1', lockId: '1' });
    expect(findings).toMatchObject([{ rule: 'client.unlock-burst', token: 'S-1', client: '10.0.0.7', requestId: 'req-11' }]);
  });

  it('finds a password in the query string and a Bearer value under any name', () => {
    expect(tokenInQuery('/v1/auth/login?email=a%40b.c&password=hunter2')).toEqual({ parameter: 'password' });
    expect(tokenInQuery('/v1/stations/S-1?x=Bearer%20eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhIn0.c2ln')).toEqual({ shape: 'bearer' });
    expect(tokenInQuery('/v1/stations/S-1?page=2')).toBeUndefined();
  });
});

describe('reports people can act on', () => {
  it('every rule has a description, a fix and a source', () => {
    for (const rule of JUDGE_RULES) {
      expect(rule.description.length, rule.id).toBeGreaterThan(20);
      expect(rule.fix.length, rule.id).toBeGreaterThan(10);
      expect(rule.source, rule.id).toMatch(/^docs\/.+#/);
    }
  });

  it('lists the client rules as skipped, not passed, when no /v1 API judged anything (stations alone)', () => {
    const summary = {};
    const xml = judgeJunitXml({ verdict: { summary, findings: [] }, rules: enabledRules({}, { summary }, { clientJudged: false }), timestamp: '2026-03-01T00:00:00.000Z' });
    const parsed = new XMLParser({ ignoreAttributes: false, isArray: (name) => name === 'testcase' }).parse(xml) as {
      testsuites: { testsuite: { '@_skipped': string; testcase: { '@_name': string; skipped?: unknown }[] } };
    };
    const cases = parsed.testsuites.testsuite.testcase;
    const clientRules = JUDGE_RULES.filter((rule) => rule.party === 'client').map((rule) => rule.id);
    expect(cases.filter((c) => c.skipped !== undefined).map((c) => c['@_name'])).toEqual(clientRules);
    expect(parsed.testsuites.testsuite['@_skipped']).toBe(String(clientRules.length));
  });

  it('states the sentAt time base at start under a time scale', () => {
    expect(timeScaleNotice(undefined)).toBeUndefined();
    expect(timeScaleNotice(1)).toBeUndefined();
    expect(timeScaleNotice(10)).toMatch(/time scale 10: .*GET \/sim\/v1\/clock/);
  });
});

it('twenty unlocks of one station through /v1 blame the client, not station-sim\'s gateway', async () => {
  const account = { email: 'burst@example.com', password: 'burst-password-1' };
  const sim = await startSimulator({
    fixture: {
      accounts: [{ ...account, stations: ['B-1'] }],
      stations: [{ token: 'B-1', stationId: 1, locks: [{ lockId: '1' }], behaviour: { unlockDelayMs: 0, relockMs: 10 } }],
      // Windows wide enough for a loaded machine: the service rates would be broken whatever the timing, were the gateway judged.
      judge: { rules: { 'client.unlock-burst': { windowMs: 600_000 }, 'service.command-rate': { maxCommands: 2, windowMs: 600_000 }, 'service.unlock-storm': { maxCommands: 2, windowMs: 600_000 } } },
    },
  });
  try {
    const client = createClient({ baseUrl: sim.apiUrl, ...account });
    await Promise.all(Array.from({ length: 20 }, () => client.unlock('B-1', '1')));
    const control = new ControlClient({ url: sim.controlUrl });
    const { summary } = await control.judge();
    expect(summary).toEqual({ 'client.unlock-burst': 1 });
  } finally {
    await sim.stop();
  }
});
