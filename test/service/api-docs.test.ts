/**
 * docs/api.md documents every error the API can answer or start with, and every unlock outcome
 * (STYLE.md: "a test that every code is documented").
 */
import { readFileSync } from 'node:fs';
import { expect, test } from 'vitest';
import { ERRORS, type ErrorCode } from '../../src/errors.js';
import { UNLOCK_FAILURES } from '../../src/service/gateway/unlock-outcome.js';

const doc = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8');

/** Codes the HTTP API answers with; their rows give status and message. */
const HTTP_CODES: ErrorCode[] = [
  'BAD_REQUEST',
  'INVALID_CREDENTIALS',
  'TOKEN_INVALID',
  'STATION_NOT_FOUND',
  'LOCK_NOT_FOUND',
  'ROUTE_NOT_FOUND',
  'PAYLOAD_TOO_LARGE',
  'UNSUPPORTED_MEDIA_TYPE',
  'INTERNAL',
  'NOT_IMPLEMENTED',
  'SESSION_STORE_UNAVAILABLE',
];
/** Codes `startApi` can fail with. */
const START_CODES: ErrorCode[] = ['BROKER_UNREACHABLE', 'BROKER_REFUSED', 'PORT_IN_USE', 'HOST_UNAVAILABLE', 'LISTEN_FAILED', 'JWT_SECRET_TOO_SHORT'];

const rowsOf = (code: string): string[] => doc.split('\n').filter((line) => line.startsWith('|') && line.includes(`\`${code}\``));

test.each(HTTP_CODES)('HTTP error %s is documented with its status', (code) => {
  const rows = rowsOf(code);
  expect(rows.length, code).toBeGreaterThan(0);
  for (const row of rows) expect(row).toMatch(new RegExp(`^\\| ${ERRORS[code].status} \\|`));
  // Codes answered with their catalogue message show it.
  expect(rows.some((row) => row.includes(ERRORS[code].message))).toBe(true);
});

test.each(START_CODES)('start error %s is documented', (code) => {
  expect(rowsOf(code).length, code).toBeGreaterThan(0);
});

test('the start error with a fixed message shows it', () => {
  expect(rowsOf('JWT_SECRET_TOO_SHORT').join()).toContain(ERRORS.JWT_SECRET_TOO_SHORT.message);
});

test.each(Object.entries(UNLOCK_FAILURES))('unlock outcome %s is documented', (code, message) => {
  const rows = rowsOf(code);
  expect(rows.length, code).toBeGreaterThan(0);
  expect(rows.join()).toContain(message);
});
