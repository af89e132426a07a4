import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { ERRORS, SimError } from '../src/errors.js';
import { ApiAbortedError, ApiTimeoutError, ApiUnreachableError, CLIENT_ERRORS } from '../src/client/index.js';

describe('error catalogue', () => {
  it('documents every code in docs/errors.md with its status', async () => {
    const doc = await readFile('docs/errors.md', 'utf8');
    for (const [code, { status }] of Object.entries(ERRORS)) {
      const row = doc.split('\n').find((line) => line.startsWith(`| \`${code}\` |`));
      expect(row, `docs/errors.md has no row for ${code}`).toBeDefined();
      expect(row).toContain(`| ${status} |`);
    }
  });

  it('shows each fixed message as the catalogue has it (a message ending in … as its beginning)', async () => {
    const doc = await readFile('docs/errors.md', 'utf8');
    for (const [code, { message }] of Object.entries(ERRORS)) {
      const row = doc.split('\n').find((line) => line.startsWith(`| \`${code}\` |`))!;
      const shown = /^\| `[A-Z_]+` \| \d+ \| `([^`]+)` \|/.exec(row)?.[1];
      if (shown === undefined) continue; // described in words ("names the field")
      if (shown.endsWith('…')) expect(message.startsWith(shown.slice(0, -1)), code).toBe(true);
      else expect(shown, code).toBe(message);
    }
  });

  it("documents every code of the reference client's no-answer errors with its class", async () => {
    const doc = await readFile('docs/errors.md', 'utf8');
    const section = doc.slice(doc.indexOf('## The reference client'));
    for (const [code, name] of Object.entries(CLIENT_ERRORS)) {
      expect(section.split('\n').find((line) => line.startsWith(`| \`${code}\` | \`${name}\` |`)), `docs/errors.md has no row for ${code}`).toBeDefined();
    }
    const errors = [new ApiUnreachableError('m', {}), new ApiTimeoutError('m', 1), new ApiAbortedError('m', {})];
    expect(errors.map((error) => [error.code, error.name])).toEqual(Object.entries(CLIENT_ERRORS));
  });

  it('gives each SimError the status of its code', () => {
    const error = new SimError('STATION_NOT_FOUND');
    expect(error).toMatchObject({ code: 'STATION_NOT_FOUND', statusCode: 404, message: 'Station not found' });
  });
});
