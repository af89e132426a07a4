/**
 * reduceKey: what each dashboard key does to the view and which actions it asks for, with no
 * terminal, no store and no React.
 */
import { describe, expect, it } from 'vitest';
import type { Key } from 'ink';
import { reduceKey, type KeyContext } from '../../src/dashboard/dashboard-keys.js';
import { FAULT_MENU } from '../../src/dashboard/dashboard-actions.js';
import { INITIAL_VIEW, type Selection, type ViewState } from '../../src/dashboard/dashboard-view.js';
import { layoutFor } from '../../src/dashboard/layout.js';
import type { SimStation } from '../../src/client/sim-types.js';

const NO_KEY: Key = {
  upArrow: false, downArrow: false, leftArrow: false, rightArrow: false, pageDown: false, pageUp: false, home: false, end: false,
  return: false, escape: false, ctrl: false, shift: false, tab: false, backspace: false, delete: false, meta: false, super: false,
  hyper: false, capsLock: false, numLock: false,
};
const key = (flags: Partial<Key> = {}): Key => ({ ...NO_KEY, ...flags });

const station = (token: string, locks = ['1', '2']): SimStation => ({ token, locks: locks.map((lockId) => ({ lockId })) }) as unknown as SimStation;
const TOKENS = ['A', 'B', 'C', 'D'];
const STATIONS = new Map(TOKENS.map((token) => [token, station(token)]));

/** The selection as resolveSelection makes it, over a fixed list filtered by the view's filter. */
function selectionOf(view: ViewState): Selection {
  const tokens = TOKENS.filter((token) => token.toLowerCase().includes(view.filter.toLowerCase()));
  const found = view.selected === undefined ? -1 : tokens.indexOf(view.selected);
  const index = found >= 0 ? found : 0;
  const token = tokens[index];
  const selected = token === undefined ? undefined : STATIONS.get(token);
  return { tokens, index, token, station: selected, lockIndex: selected ? Math.min(view.lockIndex, selected.locks.length - 1) : 0 };
}

const context: KeyContext = { layout: layoutFor(120, 40), accountCount: 3, logEntryCount: 50, selectionOf };

/** The view after typing `keys` one by one from `view`, and every action asked for. */
function press(keys: readonly (string | [string, Partial<Key>])[], view: ViewState = INITIAL_VIEW) {
  const actions = [];
  for (const one of keys) {
    const [input, flags] = typeof one === 'string' ? [one, {}] : one;
    const result = reduceKey(view, input, key(flags), context);
    view = result.view;
    actions.push(...result.actions);
  }
  return { view, actions };
}

describe('reduceKey', () => {
  it('quits on q and Ctrl-C, but types q into a filter', () => {
    expect(press(['q']).actions).toEqual([{ type: 'quit' }]);
    expect(press([['c', { ctrl: true }]]).actions).toEqual([{ type: 'quit' }]);
    const typed = press(['/', 'q']);
    expect(typed.actions).toEqual([]);
    expect(typed.view).toMatchObject({ draft: 'q', filter: 'q' });
  });

  it('moves the selection, pages, and wraps through the locks', () => {
    expect(press(['j', 'j']).view.selected).toBe('C');
    expect(press(['G', 'k']).view.selected).toBe('C');
    expect(press(['j', 'g']).view.selected).toBe('A');
    expect(press([['', { pageDown: true }]]).view.selected).toBe('D');
    expect(press([['', { leftArrow: true }]]).view.lockIndex).toBe(1);
    expect(press([['', { tab: true }], ['', { tab: true }]]).view.lockIndex).toBe(0);
  });

  it('applies a filter as it is typed, keeps it on Enter and clears it on Esc', () => {
    expect(press(['/', 'b']).view).toMatchObject({ draft: 'b', filter: 'b' });
    expect(press(['/', 'b', ['', { return: true }]]).view).toMatchObject({ draft: undefined, filter: 'b' });
    expect(press(['/', 'b', ['', { backspace: true }]]).view).toMatchObject({ draft: '', filter: '' });
    expect(press(['/', 'b', ['', { escape: true }]]).view).toMatchObject({ draft: undefined, filter: '' });
  });

  it('searches and scrolls the log, half its height at a time, never past the oldest entry', () => {
    expect(press(['e', 'x', ['', { return: true }]]).view).toMatchObject({ logSearch: 'x', logDraft: undefined, logBack: 0 });
    const step = Math.floor(context.layout.logRows / 2);
    expect(press(['[']).view.logBack).toBe(step);
    expect(press(['[', ']', ']']).view.logBack).toBe(0);
    expect(press(Array.from({ length: 100 }, () => '[')).view.logBack).toBe(49);
  });

  it('closes the innermost thing open on Esc', () => {
    const open: ViewState = { ...INITIAL_VIEW, help: true, panel: 'info', logSearch: 'x', filter: 'a' };
    const esc: [string, Partial<Key>] = ['', { escape: true }];
    expect(press([esc], open).view).toMatchObject({ help: false, panel: 'info' });
    expect(press([esc, esc], open).view).toMatchObject({ panel: undefined, logSearch: 'x' });
    expect(press([esc, esc, esc], open).view).toMatchObject({ logSearch: '', filter: 'a' });
    expect(press([esc, esc, esc, esc], open).view.filter).toBe('');
  });

  it('takes only its own keys behind the help overlay', () => {
    const help = press(['?', 'j', 'u', 'f']);
    expect(help.view).toMatchObject({ help: true, selected: undefined, panel: undefined });
    expect(help.actions).toEqual([]);
  });

  it('goes through the accounts and toggles the panels, refreshing the /v1 faults for the fault menu', () => {
    expect(press(['a', 'a', 'a', 'a']).view.account).toBe(1);
    expect(press(['i']).view.panel).toBe('info');
    expect(press(['s', 's']).view.panel).toBeUndefined();
    expect(press(['f'])).toMatchObject({ view: { panel: 'faults' }, actions: [{ type: 'refreshApiFaults' }] });
  });

  it('asks for the actions on the selected station and lock', () => {
    const at = press(['j', ['', { rightArrow: true }], 'a']).view;
    const b = STATIONS.get('B')!;
    expect(press(['u', 'o', 'b', 'x', 'r'], at).actions).toEqual([
      { type: 'unlock', token: 'B', lockId: '2', account: 1 },
      { type: 'toggleConnection', station: b },
      { type: 'toggleBattery', station: b },
      { type: 'toggleJam', station: b, lockId: '2' },
      { type: 'reboot', station: b },
    ]);
  });

  it('in the fault menu, adds and clears faults for the lock or the whole station', () => {
    const menu = press(['f']).view;
    const a = STATIONS.get('A')!;
    expect(press(['1', 'l', '1'], menu).actions).toEqual([
      { type: 'addFault', station: a, kind: FAULT_MENU[0]!.kind, lockId: '1' },
      { type: 'addFault', station: a, kind: FAULT_MENU[0]!.kind, lockId: undefined },
    ]);
    expect(press([String(FAULT_MENU.length + 1), '0', 'c'], menu).actions).toEqual([
      { type: 'addApiFault', station: a, index: 0 },
      { type: 'clearApiFaults' },
      { type: 'clearFaults', station: a },
    ]);
    // Keys the menu leaves alone still move the selection.
    expect(press(['j'], menu).view.selected).toBe('B');
  });

  it('leaves the view as it was for a key that does nothing', () => {
    const result = reduceKey(INITIAL_VIEW, 'z', key(), context);
    expect(result.view).toBe(INITIAL_VIEW);
    expect(result.actions).toEqual([]);
  });
});
