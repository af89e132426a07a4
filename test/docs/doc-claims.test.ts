/**
 * Statements of the docs that were found false when tried, held to the code: a table a paragraph
 * broke in two, the answer to a timed-out unlock, what the demo dashboard does on ST-1005, and
 * what `transcript judge` judges. (test/docs/shell-examples.test.ts runs the shell examples.)
 */
import { readdirSync, readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { ERRORS } from '../../src/errors.js';
import { runCliToEnd } from '../helpers/cli-process.js';

const DOCS = ['README.md', 'CHANGELOG.md', ...readdirSync('docs').filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)];

it('has no table row cut off from its table (a paragraph inside a table ends it, and the rows after it show as text)', () => {
  const stray: string[] = [];
  for (const file of DOCS) {
    const lines = readFileSync(file, 'utf8').split('\n');
    let fenced = false;
    for (const [index, line] of lines.entries()) {
      if (line.startsWith('```')) fenced = !fenced;
      if (fenced || !line.startsWith('|')) continue;
      const previous = lines[index - 1] ?? '';
      const next = lines[index + 1] ?? '';
      // A row belongs to the table above it, or is a header with its |---| line below.
      if (!previous.startsWith('|') && !/^\|\s*:?-{3,}/.test(next)) stray.push(`${file}:${index + 1}: ${line.slice(0, 60)}`);
    }
  }
  expect(stray).toEqual([]);
});

it("says a timed-out unlock answers 504 UNLOCK_OUTCOME_UNKNOWN, as the error catalogue and api.md do", () => {
  const row = readFileSync('docs/fixtures.md', 'utf8').split('\n').find((line) => line.startsWith('| `api.commandTimeoutMs` |'));
  expect(row).toBeDefined();
  expect(row).toContain(`${ERRORS.UNLOCK_OUTCOME_UNKNOWN.status} \`UNLOCK_OUTCOME_UNKNOWN\``);
  expect(row).not.toMatch(/success:\s*false/);
});

it("says the demo dashboard unlocks ST-1005 as bob (test/dashboard/presenter.test.tsx shows it), not that it fails", () => {
  const doc = readFileSync('docs/fixtures.md', 'utf8');
  const paragraph = doc.slice(doc.indexOf('- `fixtures/demo.json`'), doc.indexOf('- `fixtures/ci.json`'));
  expect(paragraph).toContain('on ST-1005 it unlocks as bob');
  expect(paragraph).toContain('`unlock as bob@example.com`');
  expect(paragraph).not.toContain('Station not found');
});

it('transcript judge --help says it judges by the service rules and the client rules, as docs/judge.md does', async () => {
  const help = await runCliToEnd(['transcript', 'judge', '--help']);
  expect(help.code).toBe(0);
  const text = help.stdout.replace(/\s+/g, ' ');
  expect(text).toContain('the commands the stations received by the service rules, and the /v1 requests by the client rules');
  expect(readFileSync('docs/judge.md', 'utf8').replace(/\s+/g, ' ')).toMatch(/to the same service rules, and every `\/v1` request, in order, to the same client rules/);
});
