import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { JUDGE_RULES } from '../../src/judge/rule-catalogue.js';
import { JUDGE_RULE_IDS } from '../../src/fixture/judge-schema.js';
import { FixtureError, parseFixture } from '../../src/fixture/load-fixture.js';
import { JudgeLog, judgeLine } from '../../src/judge/judge-log.js';
import { expectJudgeFindings } from '../helpers/judge-findings.js';

expectJudgeFindings('adds made-up findings to a JudgeLog to test its counts');

const station = { token: 'A', stationId: 1, locks: [{ lockId: '1' }] };

describe('the rule catalogue', () => {
  it('has every id once, each with a description and a section of a document that exists', async () => {
    expect(JUDGE_RULES.map((rule) => rule.id)).toEqual(JUDGE_RULE_IDS);
    for (const rule of JUDGE_RULES) {
      expect(rule.id).toMatch(/^(service|client)\.[a-z0-9-]+$/);
      expect(rule.party).toBe(rule.id.split('.')[0]);
      expect(rule.description.length).toBeGreaterThan(10);
      const [file, anchor] = rule.source.split('#');
      const text = await readFile(new URL(`../../${file}`, import.meta.url), 'utf8');
      // GitHub's anchor of a heading: lower case, punctuation dropped, spaces as dashes.
      const anchors = [...text.matchAll(/^#+ (.*)$/gm)].map(([, heading]) => heading!.toLowerCase().replace(/[^a-z0-9 -]/g, '').replace(/ /g, '-'));
      expect(anchors).toContain(anchor);
    }
  });

  it('is documented, each id in docs/judge.md', async () => {
    const text = await readFile(new URL('../../docs/judge.md', import.meta.url), 'utf8');
    for (const id of JUDGE_RULE_IDS) expect(text).toContain(`\`${id}\``);
  });
});

describe("a fixture's judge section", () => {
  it('takes rules switched off and thresholds', () => {
    const fixture = parseFixture({ stations: [station], judge: { rules: { 'service.qos0-command': { enabled: false }, 'service.command-rate': { maxCommands: 3, windowMs: 500 } } } });
    expect(fixture.judge.rules?.['service.command-rate']).toEqual({ maxCommands: 3, windowMs: 500 });
    expect(parseFixture({ stations: [station] }).judge).toEqual({});
  });

  it('refuses an unknown rule id with the list of known ones', () => {
    let error: unknown;
    try {
      parseFixture({ stations: [station], judge: { rules: { 'service.qos-zero': { enabled: false } } } }, 'x.json');
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(FixtureError);
    const message = (error as Error).message;
    expect(message).toContain('/judge/rules: unknown rule "service.qos-zero"; the rules are ');
    for (const id of JUDGE_RULE_IDS) expect(message).toContain(id);
  });

  it('refuses a threshold a rule does not have', () => {
    expect(() => parseFixture({ stations: [station], judge: { rules: { 'service.qos0-command': { maxCommands: 3 } } } })).toThrow(/unknown property "maxCommands"/);
  });
});

describe('the judge log', () => {
  it('counts every finding, keeps the last ones and says it in one line', () => {
    const log = new JudgeLog(2);
    expect(judgeLine(log.summary())).toBe('judge: no findings');
    const finding = { time: '2026-01-01T00:00:00.000Z', token: 'A', lockId: '1', detail: 'x' };
    log.add({ ...finding, rule: 'service.retained-command', commandId: 'c1' });
    log.add({ ...finding, rule: 'service.qos0-command', commandId: 'c2' });
    log.add({ ...finding, rule: 'service.qos0-command', commandId: 'c3' });
    expect(log.summary()).toEqual({ 'service.qos0-command': 2, 'service.retained-command': 1 });
    expect(log.findings().map((f) => f.commandId)).toEqual(['c2', 'c3']);
    expect(judgeLine(log.summary())).toBe('judge: 3 findings: service.qos0-command ×2, service.retained-command ×1');
  });
});
