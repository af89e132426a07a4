/**
 * The dashboard's keys (README, "Dashboard"): moving, filtering, help, and the actions on the
 * selected station and lock. Ink hands a run of characters read in one chunk over as one input;
 * each character is a key of its own and sees the view the key before it left, which is why the
 * view is read from and written to a ref here, not from the last render.
 */
import { useInput, type Key } from 'ink';
import type { DashboardActions } from './dashboard-actions.js';
import { bodyHeightOf, resolveSelection, type Selection, type ViewState } from './dashboard-view.js';
import type { FleetStore } from './fleet-store.js';
import { helpScrollMax } from './HelpOverlay.js';
import { splitKeys } from './key-chunks.js';
import type { ScreenLayout } from './layout.js';

export interface DashboardKeysOptions {
  /** The view as the last key left it. */
  viewRef: { readonly current: ViewState };
  /** Changes the view at once (for the next key) and asks for a redraw. */
  changeView: (change: (current: ViewState) => ViewState) => void;
  /** The layout of the last render: a page is its table's rows. */
  layoutRef: { readonly current: ScreenLayout };
  tokensFor: (filter: string) => readonly string[];
  store: FleetStore;
  actions: DashboardActions;
  exit: () => void;
  /** Without a TTY on stdin there is no raw mode, and Ink throws if asked for it. */
  isActive: boolean;
}

export function useDashboardKeys({ viewRef, changeView, layoutRef, tokensFor, store, actions, exit, isActive }: DashboardKeysOptions): void {
  /** Handles one key; false once the dashboard is quitting, so keys after it in a chunk do nothing. */
  const onKey = (input: string, key: Key): boolean => {
    const current = viewRef.current;
    if ((input === 'c' && key.ctrl) || (input === 'q' && current.draft === undefined)) {
      exit();
      return false;
    }
    if (current.draft !== undefined) editFilter(current.draft, input, key);
    else if (input === '?') changeView((state) => ({ ...state, help: !state.help, helpTop: 0 }));
    else if (key.escape) changeView((state) => (state.help ? { ...state, help: false } : { ...state, filter: '' }));
    // Behind the help overlay only the keys above and its own scrolling work: nothing should
    // change out of sight.
    else if (current.help) scrollHelp(input, key);
    else if (input === '/') changeView((state) => ({ ...state, draft: '' }));
    else onSelectionKey(input, key, resolveSelection(current, tokensFor(current.filter), store));
    return true;
  };

  const onSelectionKey = (input: string, key: Key, { tokens, index, station: selectedStation, lockIndex: lock }: Selection): void => {
    const page = layoutRef.current.tableRows;
    const select = (at: number): void => {
      if (tokens.length === 0) return;
      const token = tokens[Math.max(0, Math.min(tokens.length - 1, at))];
      changeView((state) => ({ ...state, selected: token, lockIndex: 0 }));
    };
    const selectLock = (delta: number): void => {
      const count = selectedStation?.locks.length ?? 0;
      if (count > 0) changeView((state) => ({ ...state, lockIndex: (((lock + delta) % count) + count) % count }));
    };
    if (key.upArrow || input === 'k') select(index - 1);
    else if (key.downArrow || input === 'j') select(index + 1);
    else if (key.pageUp) select(index - page);
    else if (key.pageDown) select(index + page);
    else if (key.home || input === 'g') select(0);
    else if (key.end || input === 'G') select(tokens.length - 1);
    else if (key.leftArrow || (key.tab && key.shift)) selectLock(-1);
    else if (key.rightArrow || key.tab) selectLock(1);
    else if (selectedStation) {
      const lockId = selectedStation.locks[lock]?.lockId;
      if (input === 'u' && lockId !== undefined) void actions.unlock(selectedStation.token, lockId);
      else if (input === 'o') void actions.toggleConnection(selectedStation);
      else if (input === 'b') void actions.toggleBattery(selectedStation);
      else if (input === 'x' && lockId !== undefined) void actions.toggleJam(selectedStation, lockId);
      else if (input === 'r') void actions.reboot(selectedStation);
    }
  };

  const scrollHelp = (input: string, key: Key): void => {
    const step = key.upArrow || input === 'k' ? -1 : key.downArrow || input === 'j' ? 1 : 0;
    const max = helpScrollMax(bodyHeightOf(layoutRef.current));
    if (step !== 0) changeView((state) => ({ ...state, helpTop: Math.max(0, Math.min(max, state.helpTop + step)) }));
  };

  const editFilter = (draft: string, input: string, key: Key): void => {
    if (key.return) changeView((state) => ({ ...state, filter: draft.trim(), draft: undefined }));
    else if (key.escape) changeView((state) => ({ ...state, filter: '', draft: undefined }));
    // Terminals send DEL (0x7f) for Backspace, which Ink reports as `delete`.
    else if (key.backspace || key.delete) changeView((state) => ({ ...state, draft: draft.slice(0, -1) }));
    else if (!key.ctrl && !key.meta && input.length > 0 && !/[\u0000-\u001f]/.test(input)) changeView((state) => ({ ...state, draft: draft + input }));
  };

  // Ink hands a run of characters read in one chunk over as one input ("jjj", "/102\r"): each
  // character is a key of its own, seeing the view the one before it left (hence viewRef).
  const onInput = (input: string, key: Key): void => {
    for (const press of splitKeys(input, key)) if (!onKey(press.input, press.key)) return;
  };

  useInput(onInput, { isActive });
}
