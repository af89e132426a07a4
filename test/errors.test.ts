import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { ERRORS, SimError } from '../src/errors.js';

describe('error catalogue', () => {
  it('documents every code in docs/errors.md with its status', async () => {
    const doc = await readFile('docs/errors.md', 'utf8');
    for (const [code, { status }] of Object.entries(ERRORS)) {
      const row = doc.split('\n').find((line) => line.startsWith(`| \`${code}\` |`));
      expect(row, `docs/errors.md has no row for ${code}`).toBeDefined();
      expect(row).toContain(`| ${status} |`);
    }
  });

  it('gives each SimError the status of its code', () => {
    const error = new SimError('STATION_NOT_FOUND');
    expect(error).toMatchObject({ code: 'STATION_NOT_FOUND', statusCode: 404, message: 'Station not found' });
  });
});
