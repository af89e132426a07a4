/**
 * The `unit` project's list (vitest.config.ts) names files that exist, and none that run alone: a
 * file renamed or moved would otherwise leave the list silently, for the slower `parallel` project.
 * (Each file is in exactly one project by construction: `parallel` excludes both lists.)
 */
import { existsSync } from 'node:fs';
import { matchesGlob } from 'node:path';
import { expect, it } from 'vitest';
import { ALONE, UNIT } from '../../vitest.config.js';

it('lists unit files that exist and are not also run alone', () => {
  expect(UNIT.filter((file) => !existsSync(file))).toEqual([]);
  expect(UNIT.filter((file) => ALONE.some((pattern) => matchesGlob(file, pattern)))).toEqual([]);
  expect(new Set(UNIT).size).toBe(UNIT.length);
});
