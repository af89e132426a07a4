/**
 * The JUnit report of the judge (src/judge/junit-report.ts), read back with a real XML parser: one
 * test case per rule judged by, failures with the count and evidence, text that XML cannot hold
 * replaced rather than written broken, and the file replaced whole.
 */
import { mkdtemp, readFile, readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { judgeJunitXml, writeJunitReport } from '../../src/judge/junit-report.js';
import { enabledRules, formatFinding, type FindingEvidence } from '../../src/judge/verdict.js';
import { JUDGE_RULES } from '../../src/judge/rule-catalogue.js';

const parse = (xml: string) =>
  new XMLParser({ ignoreAttributes: false, isArray: (name) => name === 'testcase' || name === 'failure' }).parse(xml) as {
    testsuites: { testsuite: { testcase: { '@_name': string; '@_classname': string; failure?: { '@_message': string; '#text': string }[] }[] } };
  };

describe('the JUnit report', () => {
  it('lists the rules judged by, fails the broken ones with evidence, and holds any text a backend sent', () => {
    const settings = { rules: { 'service.command-rate': { enabled: false } } };
    const hostile = 'c-<1>&"\u0001\u001b[2J';
    const findings: FindingEvidence[] = [
      ...Array.from({ length: 150 }, (_, i) => ({ rule: 'service.qos0-command', token: 'S-1', lockId: '1', commandId: `q-${i}`, detail: 'delivered at QoS 0', time: '2026-03-01T00:00:00.000Z' })),
      { rule: 'service.bad-payload', token: 'S-2', commandId: hostile, detail: 'not JSON' },
    ];
    const summary = { 'service.qos0-command': 400, 'service.bad-payload': 1 };
    const xml = judgeJunitXml({ verdict: { summary, findings }, rules: enabledRules(settings, { summary }), timestamp: '2026-03-01T00:00:00.000Z' });
    expect(XMLValidator.validate(xml)).toBe(true);
    const cases = parse(xml).testsuites.testsuite.testcase;
    expect(cases.map((c) => c['@_name'])).toEqual(JUDGE_RULES.map((rule) => rule.id).filter((id) => id !== 'service.command-rate'));
    const qos0 = cases.find((c) => c['@_name'] === 'service.qos0-command')!.failure![0]!;
    // The annotation title CI shows: the first finding's sentence, not a count.
    expect(qos0['@_message']).toBe('service.qos0-command at S-1/1: delivered at QoS 0 (and 399 more)');
    const lines = qos0['#text'].split('\n');
    // What the rule means, what to change and where it is written, then the last 100 kept findings and how many more there were.
    expect(lines.slice(0, 3)).toEqual([expect.stringMatching(/^rule: A command arrived with QoS 0/), 'fix: Publish commands with `qos: 1`.', expect.stringMatching(/^docs: docs\/judge\.md \(service\.qos0-command\); from docs\/design\.md#/)]);
    expect(lines[4]).toBe('400 findings:');
    expect(lines).toHaveLength(106);
    expect(lines[5]).toBe('2026-03-01T00:00:00.000Z  service.qos0-command  S-1/1  command q-50: delivered at QoS 0');
    expect(lines[105]).toBe('… and 300 more findings not kept');
    const bad = cases.find((c) => c['@_name'] === 'service.bad-payload')!.failure![0]!;
    // Markup characters come back as they were; control characters are escaped as stderr escapes them, so none can forge a line.
    expect(bad['#text']).toContain('command c-<1>&"\\u0001\\u001b[2J: not JSON');
    expect(bad['@_message']).toBe('service.bad-payload at S-2: not JSON');
  });

  it('names a rule it does not know if it has findings, so no finding is dropped', () => {
    // A rule of a newer station-sim, read from its transcript.
    const rules = enabledRules({}, { summary: { 'client.from-a-newer-version': 2 } });
    expect(rules.at(-1)).toEqual({ id: 'client.from-a-newer-version', party: 'client' });
  });

  it('formats a finding by the evidence it has', () => {
    expect(formatFinding({ rule: 'client.login-burst', account: 'a@example.com', requestId: 'r-1', detail: '12 logins in a minute' })).toBe(
      'client.login-burst  account a@example.com  request r-1: 12 logins in a minute',
    );
  });

  it('replaces the file whole, and leaves no temporary file when it cannot write', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'junit-'));
    const path = join(dir, 'report.xml');
    await writeFile(path, 'an older report');
    await writeJunitReport(path, { verdict: { summary: {}, findings: [] }, rules: enabledRules({}), timestamp: '2026-03-01T00:00:00.000Z' });
    expect(XMLValidator.validate(await readFile(path, 'utf8'))).toBe(true);
    expect(await readdir(dir)).toEqual(['report.xml']);
    await expect(writeJunitReport(join(dir, 'missing', 'r.xml'), { verdict: { summary: {}, findings: [] }, rules: [], timestamp: 'x' })).rejects.toMatchObject({ code: 'ENOENT' });
    // A directory in the way: the rename fails, and the temporary file goes.
    await expect(writeJunitReport(dir, { verdict: { summary: {}, findings: [] }, rules: [], timestamp: 'x' })).rejects.toBeDefined();
    expect(await readdir(dir)).toEqual(['report.xml']);
  });
});
