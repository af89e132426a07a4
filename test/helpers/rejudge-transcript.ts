/**
 * Judges a transcript again offline, as `station-sim transcript judge` does, and compares the
 * findings by rule with the ones the live judge recorded in the same file (its `judge` entries).
 */
import { readFileSync } from 'node:fs';
import { parseEntry, type TranscriptEntry } from '../../src/transcript/transcript-format.js';
import { TranscriptJudge } from '../../src/transcript/transcript-judge.js';

/** Undefined when both verdicts agree; otherwise one line saying how they differ. */
export function rejudgeMismatch(path: string): string | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    // A transcript whose file is gone (a test that removed it to see the failure) has nothing to compare.
    return undefined;
  }
  return rejudgeTextMismatch(path, text);
}

/** `rejudgeMismatch` of a transcript already read: `text` is the file at `path`. */
export function rejudgeTextMismatch(path: string, text: string): string | undefined {
  const judge = new TranscriptJudge();
  for (const line of text.split('\n')) {
    const entry: TranscriptEntry | undefined = line.trim() === '' ? undefined : parseEntry(line);
    if (entry) judge.observe(entry);
  }
  const result = judge.result();
  const offline: Record<string, number | undefined> = result.summary;
  const live = result.recorded;
  const rules = [...new Set([...Object.keys(live), ...Object.keys(offline)])].sort();
  const differing = rules.filter((rule) => (live[rule] ?? 0) !== (offline[rule] ?? 0));
  if (differing.length === 0) return undefined;
  return `${path}: ${differing.map((rule) => `${rule} live ${live[rule] ?? 0}, offline ${offline[rule] ?? 0}`).join('; ')}`;
}
