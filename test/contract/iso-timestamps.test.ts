/**
 * `parseIsoUtc` reads every timestamp of the contract (statuses, lock states, commands' `sentAt`)
 * without writing a date back: it must take exactly what a read-back check takes.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { parseIsoUtc } from '../../src/contract/payloads.js';

/** The reference: Date.parse, then the date written back must read the same (what the contract means). */
function readBack(value: string): number | undefined {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,3})?Z$/.test(value)) return undefined;
  const at = Date.parse(value);
  return Number.isFinite(at) && new Date(at).toISOString().slice(0, 19) === value.slice(0, 19) ? at : undefined;
}

const pad = (value: number, width: number): string => String(value).padStart(width, '0');

describe('parseIsoUtc', () => {
  it('takes real instants and refuses impossible ones', () => {
    expect(parseIsoUtc('2026-11-28T03:32:14.683Z')).toBe(Date.UTC(2026, 10, 28, 3, 32, 14, 683));
    expect(parseIsoUtc('2024-02-29T00:00:00Z')).toBe(Date.UTC(2024, 1, 29));
    expect(parseIsoUtc('2000-02-29T23:59:59.9Z')).toBe(Date.UTC(2000, 1, 29, 23, 59, 59, 900));
    for (const bad of ['2026-02-29T00:00:00Z', '1900-02-29T00:00:00Z', '2026-02-30T00:00:00Z', '2026-04-31T00:00:00Z', '2026-13-01T00:00:00Z', '2026-00-10T00:00:00Z', '2026-01-00T00:00:00Z', '2026-01-01T24:00:00Z', '2026-01-01T23:60:00Z', '2026-01-01T23:00:60Z', '2026-01-01T00:00:00+01:00', '2026-01-01 00:00:00Z', '2026-01-01T00:00:00.1234Z']) {
      expect(parseIsoUtc(bad), bad).toBeUndefined();
    }
  });

  it('agrees with the read-back check on every date-shaped string', () => {
    const shaped = fc
      .tuple(fc.integer({ min: 0, max: 9999 }), fc.integer({ min: 0, max: 14 }), fc.integer({ min: 0, max: 33 }), fc.integer({ min: 0, max: 25 }), fc.integer({ min: 0, max: 61 }), fc.integer({ min: 0, max: 61 }), fc.option(fc.integer({ min: 0, max: 999 })))
      .map(([y, mo, d, h, mi, s, ms]) => `${pad(y, 4)}-${pad(mo, 2)}-${pad(d, 2)}T${pad(h, 2)}:${pad(mi, 2)}:${pad(s, 2)}${ms === null ? '' : `.${pad(ms, 3)}`}Z`);
    fc.assert(
      fc.property(shaped, (value) => {
        expect(parseIsoUtc(value)).toBe(readBack(value));
      }),
      { numRuns: 20_000 },
    );
  });
});
