/**
 * The judge over the whole suite (issue 19, "Proven"): every simulator a test file starts in its
 * process is judged, and the file fails when the judge found anything, unless the file says at its
 * top that it breaks rules on purpose:
 *
 * ```ts
 * expectJudgeFindings('publishes commands with QoS 0 by hand');
 * ```
 *
 * `judge-setup.ts` (vitest's `setupFiles`) listens on the judge's diagnostics channel
 * (`JUDGE_FINDING_CHANNEL`, published by every judge log in the process, whatever the rule) and
 * checks in an `afterAll`. Fleets in child processes (the CLI tests) are judged only when their
 * findings reach a control plane in this process.
 */
import type { JudgeFinding } from '../../src/judge/judge-log.js';

interface JudgeFindingsState {
  /** Why this file breaks rules on purpose; unset, any finding fails it. */
  expected?: string;
  findings: Map<string, JudgeFinding>;
}

// On globalThis, so the setup file and the test file share it even if each loaded its own copy of this module.
const KEY = Symbol.for('station-sim.test.judge-findings');

export function judgeFindingsState(): JudgeFindingsState {
  const holder = globalThis as { [KEY]?: JudgeFindingsState };
  holder[KEY] ??= { findings: new Map() };
  return holder[KEY];
}

/** Marks the calling test file as breaking rules of the judge on purpose; `reason` says how. */
export function expectJudgeFindings(reason: string): void {
  if (reason.trim() === '') throw new Error('expectJudgeFindings: say why the file breaks rules of the judge');
  judgeFindingsState().expected = reason;
}

/** One line per rule with its count, then the first findings themselves. */
export function describeFindings(findings: JudgeFinding[]): string {
  const counts = new Map<string, number>();
  for (const finding of findings) counts.set(finding.rule, (counts.get(finding.rule) ?? 0) + 1);
  const summary = [...counts].map(([rule, count]) => `${rule} ×${count}`).join(', ');
  const first = findings.slice(0, 5).map((f) => `  ${JSON.stringify(f)}`);
  return [summary, ...first].join('\n');
}
