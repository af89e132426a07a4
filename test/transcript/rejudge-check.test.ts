/**
 * The suite's own check (test/helpers/judge-setup.ts) that every transcript a test writes gets the
 * same verdict offline as live: it must see a difference when there is one.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { rejudgeMismatch } from '../helpers/rejudge-transcript.js';
import { expectJudgeFindings } from '../helpers/judge-findings.js';

expectJudgeFindings('replays transcripts that break a client rule on purpose');

const dir = mkdtempSync(join(tmpdir(), 'rejudge-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const T = '2026-01-01T00:00:00.000Z';
const login = (n: number, at = T): string =>
  JSON.stringify({ t: at, kind: 'client', requestId: `req-${n}`, arrival: n, arrivalsAtAnswer: n, method: 'POST', route: '/v1/auth/login', status: 200, client: '127.0.0.1', account: 'a1' });
const reset = JSON.stringify({ t: T, kind: 'sim', event: 'control', detail: 'reset' });
const finding = JSON.stringify({ t: T, kind: 'judge', rule: 'client.login-instead-of-refresh', party: 'client', account: 'a1', detail: 'six logins' });

it('agrees when the live findings are the ones a replay finds, resets included', () => {
  const path = join(dir, 'agree.jsonl');
  // Six logins of one account in a minute break the rule once; with a reset between each, never.
  writeFileSync(path, [1, 2, 3, 4, 5, 6].map((n) => login(n)).join('\n') + `\n${finding}\n`);
  expect(rejudgeMismatch(path)).toBeUndefined();
  const withResets = join(dir, 'resets.jsonl');
  writeFileSync(withResets, [1, 2, 3, 4, 5, 6].map((n) => `${reset}\n${login(n)}`).join('\n') + '\n');
  expect(rejudgeMismatch(withResets)).toBeUndefined();
});

it('names the rule and both counts when they differ', () => {
  const path = join(dir, 'differ.jsonl');
  // The live run recorded a finding the replay cannot find (the resets forgave the logins).
  writeFileSync(path, [1, 2, 3, 4, 5, 6].map((n) => `${reset}\n${login(n)}`).join('\n') + `\n${finding}\n`);
  expect(rejudgeMismatch(path)).toBe(`${path}: client.login-instead-of-refresh live 1, offline 0`);
});
