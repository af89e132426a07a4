/**
 * What the judge found in a run, as its outlets take it (the line at stop, `run --judge strict`,
 * the JUnit report, `station-sim transcript judge`): the count per rule and the findings kept.
 *
 * A finding is read by its fields, each optional but `rule` and `detail`: a service rule names the
 * station and the command, a client rule may name the account or the request instead, so nothing
 * here assumes a station.
 */
import { JUDGE_RULES } from './rule-catalogue.js';
import type { JudgeSettings } from '../fixture/judge-schema.js';

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
 * One line per finding: `time  rule  station/lock  command C  account A  request R: detail`, with
 * only the evidence it has.
 */
export function formatFinding(finding: FindingEvidence): string {
  const where = finding.token !== undefined ? `${finding.token}${finding.lockId ? `/${finding.lockId}` : ''}` : finding.lockId !== undefined ? `lock ${finding.lockId}` : '';
  const evidence = [
    finding.time ?? '',
    finding.rule,
    where,
    finding.commandId !== undefined ? `command ${finding.commandId}` : '',
    finding.account !== undefined ? `account ${finding.account}` : '',
    finding.requestId !== undefined ? `request ${finding.requestId}` : '',
  ].filter(Boolean);
  return `${evidence.join('  ')}: ${finding.detail}`;
}

/** A rule of the judge as a report lists it. */
export interface ReportedRule {
  id: string;
  party: string;
}

/**
 * The rules a run was judged by: the catalogue's, less those the fixture switched off
 * (`enabled: false`), plus any rule with findings that the catalogue does not know (a finding
 * is never dropped from a report).
 */
export function enabledRules(settings: JudgeSettings, verdict?: Pick<JudgeVerdict, 'summary'>): ReportedRule[] {
  const rules = (settings.rules ?? {}) as Record<string, { enabled?: boolean } | undefined>;
  const enabled: ReportedRule[] = JUDGE_RULES.filter((rule) => rules[rule.id]?.enabled !== false).map((rule) => ({ id: rule.id, party: rule.party }));
  for (const id of Object.keys(verdict?.summary ?? {})) {
    if (!enabled.some((rule) => rule.id === id)) enabled.push({ id, party: id.split('.')[0] ?? 'judge' });
  }
  return enabled;
}
