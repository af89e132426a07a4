/**
 * vitest `setupFiles`: the judge is on in every simulator, and a test file whose simulators broke a
 * rule fails, unless it called `expectJudgeFindings(reason)` (judge-findings.ts says why and how).
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { readFileSync } from 'node:fs';
import { afterAll } from 'vitest';
import type { JudgeFinding } from '../../src/judge/judge-log.js';
import { JUDGE_FINDING_CHANNEL, TRANSCRIPT_CLOSED_CHANNEL } from '../../src/shared/diagnostics-channels.js';
import { describeFindings, judgeFindingsState } from './judge-findings.js';
import type { ClosedTranscript } from '../../src/transcript/transcript-recorder.js';

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

// Every transcript a simulator of this file wrote is judged again offline as it closes (read at
// once: the test may delete it next): the verdict must be the one the live judge recorded in it.
// The offline judge is loaded only by a file that wrote one: most write none, and loading it for
// each of them was the larger part of this file's cost.
const rejudged: Promise<string | undefined>[] = [];
const onTranscript = (message: unknown): void => {
  const closed = message as ClosedTranscript;
  if (!closed.complete) return;
  let text: string;
  try {
    text = readFileSync(closed.path, 'utf8');
  } catch {
    // A transcript whose file is gone (a test that removed it to see the failure) has nothing to compare.
    return;
  }
  rejudged.push(import('./rejudge-transcript.js').then(({ rejudgeTextMismatch }) => rejudgeTextMismatch(closed.path, text)));
};
subscribe(TRANSCRIPT_CLOSED_CHANNEL, onTranscript);

// Registered before the test file's own hooks, so it runs after them (vitest runs after-hooks as a
// stack): the simulators have stopped, and everything they found is in.
afterAll(async () => {
  unsubscribe(JUDGE_FINDING_CHANNEL, onFinding);
  unsubscribe(TRANSCRIPT_CLOSED_CHANNEL, onTranscript);
  const mismatches = (await Promise.all(rejudged.splice(0))).filter((mismatch) => mismatch !== undefined);
  if (mismatches.length > 0) throw new Error(`live and offline verdicts differ:\n${mismatches.join('\n')}`);
  const findings = [...state.findings.values()];
  state.findings.clear();
  if (state.expected !== undefined || findings.length === 0) return;
  throw new Error(
    `the judge found ${findings.length} broken rule(s) in this file's simulators: ${describeFindings(findings)}\n` +
      "If the file breaks rules on purpose, say so at its top: expectJudgeFindings('why').",
  );
});
