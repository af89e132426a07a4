/**
 * What the judge found in a run, as its outlets take it (the line at stop, `run --judge strict`,
 * the JUnit report, `station-sim transcript judge`): the count per rule and the findings kept.
 *
 * A finding is read by its fields, each optional but `rule` and `detail`: a service rule names the
 * station and the command, a client rule may name the account or the request instead, so nothing
 * here assumes a station.
 */
import { EMBEDDED_BROKER_RULES, JUDGE_RULES } from './rule-catalogue.js';
import type { JudgeRuleId, JudgeSettings } from '../fixture/judge-schema.js';

/** A finding as the outlets read it: the evidence it has, by name. */
export interface FindingEvidence {
  rule: string;
  detail: string;
  time?: string;
  /** The station (its token on the contract, not a credential). */
  token?: string;
  lockId?: string;
  commandId?: string;
  party?: string;
  account?: string;
  requestId?: string;
  /** The client's address (client rules). */
  client?: string;
  /** The method and route pattern of the request (client rules). */
  route?: string;
}

export interface JudgeVerdict {
  /** Findings per rule id, broken rules only. */
  summary: Readonly<Record<string, number>>;
  /** The findings kept (the last ones when there were many), oldest first. */
  findings: readonly FindingEvidence[];
}

/** Every finding counted. */
export function findingCount(verdict: Pick<JudgeVerdict, 'summary'>): number {
  return Object.values(verdict.summary).reduce((sum, count) => sum + count, 0);
}

/**
 * One line per finding: `time  rule  station/lock  command C  GET /v1/… from ADDRESS  account A
 * request R: detail`, with only the evidence it has. Control characters of the evidence (a command
 * id is whatever a backend put in its payload) are escaped, so no value can forge a line.
 */
export function formatFinding(finding: FindingEvidence): string {
  const where = finding.token !== undefined ? `${finding.token}${finding.lockId ? `/${finding.lockId}` : ''}` : finding.lockId !== undefined ? `lock ${finding.lockId}` : '';
  const evidence = [
    finding.time ?? '',
    finding.rule,
    where,
    finding.commandId !== undefined ? `command ${finding.commandId}` : '',
    finding.route !== undefined ? `${finding.route}${finding.client !== undefined ? ` from ${finding.client}` : ''}` : finding.client !== undefined ? `from ${finding.client}` : '',
    finding.account !== undefined ? `account ${finding.account}` : '',
    finding.requestId !== undefined ? `request ${finding.requestId}` : '',
  ].filter(Boolean);
  return printable(`${evidence.join('  ')}: ${finding.detail}`);
}

/**
 * The sentence that names a finding on its own (a CI annotation's title): the rule and what was
 * seen, with where it was seen when there is a station or a route.
 */
export function findingSentence(finding: FindingEvidence): string {
  const where = finding.token !== undefined ? ` at ${finding.token}${finding.lockId ? `/${finding.lockId}` : ''}` : finding.route !== undefined ? ` on ${finding.route}` : '';
  return printable(`${finding.rule}${where}: ${finding.detail}`);
}

/** What a reader needs beside the evidence: what the rule means, what to change, where it is written. */
export function ruleGuidance(id: string): string[] {
  const rule = JUDGE_RULES.find((known) => known.id === id);
  if (!rule) return [`rule ${id}: see docs/judge.md`];
  return [`rule: ${rule.description}`, `fix: ${rule.fix}`, `docs: docs/judge.md (${rule.id}); from ${rule.source}`];
}

/** Control characters as `\uXXXX`, as stderr and `transcript show` print them. */
function printable(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Why a rule with no findings was not judged in a run, if it was not. */
function skippedBecause(id: JudgeRuleId, party: string, options: { clientJudged?: boolean; brokerJudged?: boolean }): { skipped?: string } {
  if (party === 'client' && options.clientJudged === false) return { skipped: 'no /v1 API in this run, so no request was judged' };
  if (options.brokerJudged === false && EMBEDDED_BROKER_RULES.includes(id)) return { skipped: 'judged on the embedded broker only, which did not carry this run' };
  return {};
}

/** A rule of the judge as a report lists it. */
export interface ReportedRule {
  id: string;
  party: string;
  /** Why nothing judged it in this run (`stations` alone has no `/v1` API, so no client rule is judged). */
  skipped?: string;
}

/**
 * The rules a run was judged by: the catalogue's, less those the fixture switched off
 * (`enabled: false`), plus any rule with findings that the catalogue does not know (a finding
 * is never dropped from a report). With `clientJudged: false` (no `/v1` API in the run) the
 * client rules are listed as skipped, not as passed; with `brokerJudged: false` (an external broker)
 * so are the rules only the embedded broker can judge (`EMBEDDED_BROKER_RULES`).
 */
export function enabledRules(settings: JudgeSettings, verdict?: Pick<JudgeVerdict, 'summary'>, options: { clientJudged?: boolean; brokerJudged?: boolean } = {}): ReportedRule[] {
  const rules = (settings.rules ?? {}) as Record<string, { enabled?: boolean } | undefined>;
  const enabled: ReportedRule[] = JUDGE_RULES.filter((rule) => rules[rule.id]?.enabled !== false).map((rule) => ({
    id: rule.id,
    party: rule.party,
    ...(!(verdict?.summary[rule.id] ?? 0) ? skippedBecause(rule.id, rule.party, options) : {}),
  }));
  for (const id of Object.keys(verdict?.summary ?? {})) {
    if (!enabled.some((rule) => rule.id === id)) enabled.push({ id, party: id.split('.')[0] ?? 'judge' });
  }
  return enabled;
}
