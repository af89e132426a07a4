/**
 * The judge's findings as a JUnit XML report (`--judge-report FILE`), the format CI systems
 * (GitHub Actions reporters, GitLab, Jenkins, Azure Pipelines) show as test results: one test
 * suite `station-sim judge`, one test case per rule the run was judged by (classname: who the rule
 * judges, `service` or `client`; name: the rule id), failed when the rule was broken, with the
 * count and the evidence of the findings kept.
 *
 * Written with xmlbuilder2, which escapes text and attributes and replaces the characters XML 1.0
 * cannot hold: a command id is whatever a backend put in its payload.
 */
import { randomUUID } from 'node:crypto';
import { rename, rm, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { create } from 'xmlbuilder2';
import { findingSentence, formatFinding, ruleGuidance, type JudgeVerdict, type ReportedRule } from './verdict.js';

export const JUNIT_SUITE_NAME = 'station-sim judge';

/** Evidence lines per failed rule; the count says how many there were in all. */
const MAX_EVIDENCE = 100;

export interface JunitReportInput {
  verdict: JudgeVerdict;
  /** The rules judged by (verdict.ts `enabledRules`), in the order the report lists them. */
  rules: readonly ReportedRule[];
  /** When the report was made, ISO 8601 (written in UTC to the second, as the Ant JUnit schema has it, with no zone). */
  timestamp: string;
  /** The machine, for the report's `hostname`. @default os.hostname() */
  hostname?: string;
}

/** The report as an XML document. */
export function judgeJunitXml(input: JunitReportInput): string {
  const failed = input.rules.filter((rule) => (input.verdict.summary[rule.id] ?? 0) > 0);
  const skipped = input.rules.filter((rule) => rule.skipped !== undefined && !failed.includes(rule));
  const root = create({ version: '1.0', encoding: 'UTF-8', invalidCharReplacement: '\ufffd' }).ele('testsuites', {
    name: JUNIT_SUITE_NAME,
    tests: String(input.rules.length),
    failures: String(failed.length),
    errors: '0',
    skipped: String(skipped.length),
  });
  const suite = root.ele('testsuite', {
    name: JUNIT_SUITE_NAME,
    tests: String(input.rules.length),
    failures: String(failed.length),
    errors: '0',
    skipped: String(skipped.length),
    // The attributes the Ant JUnit schema requires, which the strictest readers check; a rule takes no time of its own.
    time: '0',
    timestamp: input.timestamp.slice(0, 19),
    hostname: input.hostname ?? hostname(),
  });
  for (const rule of input.rules) {
    const testcase = suite.ele('testcase', { classname: rule.party, name: rule.id, time: '0' });
    const count = input.verdict.summary[rule.id] ?? 0;
    if (count === 0) {
      if (rule.skipped !== undefined) testcase.ele('skipped', { message: rule.skipped });
      continue;
    }
    const kept = input.verdict.findings.filter((finding) => finding.rule === rule.id);
    const shown = kept.slice(-MAX_EVIDENCE);
    const left = count - shown.length;
    // Evidence lines are escaped (verdict.ts, formatFinding): a newline in a command id cannot forge a line.
    const lines = [...ruleGuidance(rule.id), '', `${count} finding${count === 1 ? '' : 's'}:`, ...shown.map(formatFinding)];
    if (left > 0) lines.push(`… and ${left} more finding${left === 1 ? '' : 's'} not kept`);
    // The message is what CI shows as the annotation's title: the first finding, in one sentence.
    const first = kept[0];
    const message = first ? findingSentence(first) + (count > 1 ? ` (and ${count - 1} more)` : '') : `${count} finding${count === 1 ? '' : 's'}`;
    testcase.ele('failure', { message, type: rule.id }).txt(lines.join('\n'));
  }
  return root.end({ prettyPrint: true });
}

/**
 * Writes the report to `path` atomically: a temporary file beside it, then a rename, so a CI
 * step never reads half a report, and a report from an earlier run is replaced whole or not at all.
 */
export async function writeJunitReport(path: string, input: JunitReportInput): Promise<void> {
  const temporary = join(dirname(path), `.${basename(path)}.${randomUUID().slice(0, 8)}.tmp`);
  try {
    await writeFile(temporary, judgeJunitXml(input));
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}
