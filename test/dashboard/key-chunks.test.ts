import { describe, expect, it } from 'vitest';
import type { Key } from 'ink';
import { splitKeys } from '../../src/dashboard/key-chunks.js';

const plain: Key = {
  upArrow: false, downArrow: false, leftArrow: false, rightArrow: false, pageDown: false, pageUp: false, home: false, end: false,
  return: false, escape: false, ctrl: false, shift: false, tab: false, backspace: false, delete: false, meta: false,
  super: false, hyper: false, capsLock: false, numLock: false,
};
const summary = (input: string, key: Key = plain): string[] =>
  splitKeys(input, key).map(({ input: text, key: flags }) =>
    [text, ...Object.entries(flags).filter(([, value]) => value === true).map(([name]) => name)].join('+'));

describe('splitKeys', () => {
  it('passes a single key or one with a modifier through unchanged', () => {
    expect(summary('j')).toEqual(['j']);
    expect(summary('', { ...plain, upArrow: true })).toEqual(['+upArrow']);
    expect(summary('ab', { ...plain, meta: true })).toEqual(['ab+meta']);
  });

  it('turns a run read in one chunk into one key per character, controls as Ink names them', () => {
    expect(summary('jjG')).toEqual(['j', 'j', 'G+shift']);
    expect(summary('/102\r')).toEqual(['/', '1', '0', '2', '+return']);
    expect(summary('a\u007f\b\t\u0003')).toEqual(['a', '+delete', '+backspace', '+tab', 'c+ctrl']);
    expect(summary('🔒x')).toEqual(['🔒', 'x']);
  });
});
