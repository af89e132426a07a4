/**
 * A server the tests need that is missing (Mosquitto, Redis, tmux) skips its tests, loudly, on a
 * developer's machine, and fails the run under CI: CI must never pass on tests it skipped.
 */
import { expect, it } from 'vitest';
import { inCi, toolAvailable, type RequiredTool } from '../helpers/required-tool.js';

const MISSING: RequiredTool = { command: 'station-sim-no-such-server', probe: ['--version'], what: 'the tests of a server that is not there', aptPackage: 'no-such-package' };

it('fails under CI when a server the tests need is missing', () => {
  const warnings: string[] = [];
  for (const value of ['true', '1', 'yes']) {
    expect(() => toolAvailable(MISSING, { CI: value }, (line) => warnings.push(line))).toThrow(
      `station-sim-no-such-server is not installed, and CI=${value} requires the tests of a server that is not there to run (apt-get install no-such-package)`,
    );
  }
  expect(warnings).toEqual([]);
});

it('skips, saying so, outside CI', () => {
  for (const env of [{}, { CI: '' }, { CI: 'false' }, { CI: '0' }]) {
    const warnings: string[] = [];
    expect(toolAvailable(MISSING, env, (line) => warnings.push(line))).toBe(false);
    expect(warnings.join('')).toMatch(/station-sim-no-such-server not found.*SKIPPED/);
  }
});

it('answers true, silently, for a program that is there', () => {
  const warnings: string[] = [];
  expect(toolAvailable({ command: process.execPath, probe: ['--version'], what: 'node', aptPackage: 'nodejs' }, { CI: 'true' }, (line) => warnings.push(line))).toBe(true);
  expect(warnings).toEqual([]);
});

it('reads CI as CI services set it', () => {
  expect([inCi({ CI: 'true' }), inCi({ CI: '1' }), inCi({}), inCi({ CI: 'false' }), inCi({ CI: '' })]).toEqual([true, true, false, false, false]);
});
