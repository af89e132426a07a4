/**
 * Ink 6 reads stdin in chunks and hands a run of plain characters read at once ("jjj" from key
 * repeat under load, "/102\r" typed fast, tmux send-keys, a paste) to `useInput` as ONE input
 * string. Escape sequences (arrows, Page Up…) are split off by Ink already; what is left is a
 * run of characters and C0 controls, which this module turns back into one key per character.
 */
import type { Key } from 'ink';

const NO_KEY: Key = {
  upArrow: false,
  downArrow: false,
  leftArrow: false,
  rightArrow: false,
  pageDown: false,
  pageUp: false,
  home: false,
  end: false,
  return: false,
  escape: false,
  ctrl: false,
  shift: false,
  tab: false,
  backspace: false,
  delete: false,
  meta: false,
  super: false,
  hyper: false,
  capsLock: false,
  numLock: false,
};

/** One key: what `useInput` would have reported had the character arrived alone. */
export interface KeyPress {
  input: string;
  key: Key;
}

/**
 * The keys in one `useInput` call, in order. A single key, or anything carrying a modifier, is
 * passed through as Ink reported it; a multi-character plain run becomes one key per character
 * (by code point, so an emoji stays whole), with the controls a terminal sends in such a run
 * (Enter, Tab, Backspace, DEL, Ctrl-letters) reported as Ink reports them on their own.
 */
export function splitKeys(input: string, key: Key): KeyPress[] {
  const characters = [...input];
  if (characters.length <= 1 || key.ctrl || key.meta) return [{ input, key }];
  return characters.map(keyOf);
}

function keyOf(character: string): KeyPress {
  switch (character) {
    case '\r':
      return { input: '', key: { ...NO_KEY, return: true } };
    // Ink names a lone LF `enter` but not `return`: no key it acts on.
    case '\n':
      return { input: '', key: NO_KEY };
    case '\t':
      return { input: '', key: { ...NO_KEY, tab: true } };
    case '\b':
      return { input: '', key: { ...NO_KEY, backspace: true } };
    // Terminals send DEL for Backspace; Ink names it `delete`.
    case '\u007f':
      return { input: '', key: { ...NO_KEY, delete: true } };
  }
  const code = character.codePointAt(0)!;
  // Ctrl-A … Ctrl-Z arrive as 0x01 … 0x1a; Ink reports them as the letter with `ctrl`.
  if (code >= 1 && code <= 26) return { input: String.fromCharCode(code + 96), key: { ...NO_KEY, ctrl: true } };
  return { input: character, key: { ...NO_KEY, shift: /^[A-Z]$/.test(character) } };
}
