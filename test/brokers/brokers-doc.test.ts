/** docs/brokers.md carries the table of broker-traits.ts, which the broker matrix asserts on every run. */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { brokerTable } from './broker-traits.js';

describe('docs/brokers.md', () => {
  it('has the table of what differs per broker, as the matrix measures it', async () => {
    const doc = await readFile(new URL('../../docs/brokers.md', import.meta.url), 'utf8');
    const found = /<!-- broker-table: generated from test\/brokers\/broker-traits.ts -->\n([\s\S]*?)\n<!-- \/broker-table -->/.exec(doc);
    expect(found, 'the table markers in docs/brokers.md').not.toBeNull();
    expect(found![1]).toBe(brokerTable());
  });
});
