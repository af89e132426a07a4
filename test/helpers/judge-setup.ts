/**
 * vitest `setupFiles`: the judge is on in every simulator, and a test file whose simulators broke a
 * rule fails, unless it called `expectJudgeFindings(reason)` (judge-findings.ts says why and how).
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { afterAll } from 'vitest';
import { JUDGE_FINDING_CHANNEL, type JudgeFinding } from '../../src/judge/judge-log.js';
import { describeFindings, judgeFindingsState } from './judge-findings.js';

const state = judgeFindingsState();
state.expected = undefined;
state.findings.clear();

// The same finding reaches the fleet's log and, over the control channel, the control plane's: kept once.
const onFinding = (message: unknown): void => {
  const finding = message as JudgeFinding;
  const key = JSON.stringify(Object.entries(finding).sort(([a], [b]) => a.localeCompare(b)));
  state.findings.set(key, finding);
};
subscribe(JUDGE_FINDING_CHANNEL, onFinding);

// Registered before the test file's own hooks, so it runs after them (vitest runs after-hooks as a
// stack): the simulators have stopped, and everything they found is in.
afterAll(() => {
  unsubscribe(JUDGE_FINDING_CHANNEL, onFinding);
  const findings = [...state.findings.values()];
  state.findings.clear();
  if (state.expected !== undefined || findings.length === 0) return;
  throw new Error(
    `the judge found ${findings.length} broken rule(s) in this file's simulators: ${describeFindings(findings)}\n` +
      "If the file breaks rules on purpose, say so at its top: expectJudgeFindings('why').",
  );
});
