/**
 * The dashboard's keys (README, "Dashboard"): moving, filtering, help, the panels (faults, info,
 * overview), the log's scrolling and search, the account, and the actions on the selected station
 * and lock. Ink hands a run of characters read in one chunk over as one input;
 * each character is a key of its own and sees the view the key before it left, which is why the
 * view is read from and written to a ref here, not from the last render.
 */
import { useInput, type Key } from 'ink';
import { API_FAULT_MENU, FAULT_MENU, type DashboardActions } from './dashboard-actions.js';
import { bodyHeightOf, resolveSelection, type Panel, type Selection, type ViewState } from './dashboard-view.js';
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
  /** How many accounts `a` goes through. */
  accountCount: number;
  /** Log entries there are to scroll back through (search applied). */
  logEntryCount: () => number;
  /** Asked after a `/v1` fault is added or cleared, so the menu lists them as they now are. */
  onApiFaultsChanged: () => void;
  exit: () => void;
  /** Without a TTY on stdin there is no raw mode, and Ink throws if asked for it. */
  isActive: boolean;
}

export function useDashboardKeys(options: DashboardKeysOptions): void {
  const { viewRef, changeView, layoutRef, tokensFor, store, actions, exit, isActive } = options;
  /** Handles one key; false once the dashboard is quitting, so keys after it in a chunk do nothing. */
  const onKey = (input: string, key: Key): boolean => {
    const current = viewRef.current;
    const typing = current.draft !== undefined || current.logDraft !== undefined;
    if ((input === 'c' && key.ctrl) || (input === 'q' && !typing)) {
      exit();
      return false;
    }
    if (current.draft !== undefined) editFilter(current.draft, input, key);
    else if (current.logDraft !== undefined) editLogSearch(current.logDraft, input, key);
    else if (input === '?') changeView((state) => ({ ...state, help: !state.help, helpTop: 0 }));
    else if (key.escape) changeView(escape);
    // Behind the help overlay only the keys above and its own scrolling work: nothing should
    // change out of sight.
    else if (current.help) scrollHelp(input, key);
    else if (input === '/') changeView((state) => ({ ...state, draft: '' }));
    else if (input === 'e') changeView((state) => ({ ...state, logDraft: '', logBack: 0 }));
    else if (input === '[' || input === ']') scrollLog(input === '[' ? 1 : -1);
    else if (input === 'a') changeView((state) => ({ ...state, account: options.accountCount === 0 ? 0 : (state.account + 1) % options.accountCount }));
    else if (input === 'f' || input === 'i' || input === 's') togglePanel(input === 'f' ? 'faults' : input === 'i' ? 'info' : 'overview');
    else {
      const selection = resolveSelection(current, tokensFor(current.filter), store);
      if (!(current.panel === 'faults' && onFaultKey(input, selection))) onSelectionKey(input, key, selection);
    }
    return true;
  };

  /** Esc closes what is open, the innermost first: help, a panel, the log search, the filter. */
  const escape = (state: ViewState): ViewState => {
    if (state.help) return { ...state, help: false };
    if (state.panel !== undefined) return { ...state, panel: undefined };
    if (state.logSearch !== '' || state.logBack !== 0) return { ...state, logSearch: '', logBack: 0 };
    return { ...state, filter: '' };
  };

  const togglePanel = (panel: Panel): void => {
    changeView((state) => ({ ...state, panel: state.panel === panel ? undefined : panel }));
    if (panel === 'faults') options.onApiFaultsChanged();
  };

  /** Half a log's height at a time; never past the oldest entry. */
  const scrollLog = (direction: 1 | -1): void => {
    const step = Math.max(1, Math.floor(layoutRef.current.logRows / 2));
    const max = Math.max(0, options.logEntryCount() - 1);
    changeView((state) => ({ ...state, logBack: Math.max(0, Math.min(max, state.logBack + direction * step)) }));
  };

  /** The fault menu's own keys; false for a key it leaves to the rest. */
  const onFaultKey = (input: string, { station, lockIndex }: Selection): boolean => {
    if (!station) return false;
    const digit = /^[1-9]$/.test(input) ? Number(input) : undefined;
    const lockId = viewRef.current.faultScope === 'lock' ? station.locks[lockIndex]?.lockId : undefined;
    if (digit !== undefined && digit <= FAULT_MENU.length) void actions.addFault(station, FAULT_MENU[digit - 1]!.kind, lockId);
    else if (digit !== undefined && digit - FAULT_MENU.length <= API_FAULT_MENU.length) {
      void actions.addApiFault(station, digit - FAULT_MENU.length - 1).finally(options.onApiFaultsChanged);
    } else if (input === '0') void actions.clearApiFaults().finally(options.onApiFaultsChanged);
    else if (input === 'c') void actions.clearFaults(station);
    else if (input === 'l') changeView((state) => ({ ...state, faultScope: state.faultScope === 'lock' ? 'station' : 'lock' }));
    else return false;
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
      if (input === 'u' && lockId !== undefined) void actions.unlock(selectedStation.token, lockId, viewRef.current.account);
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

  // The filter applies as it is typed; Enter keeps it, Esc clears it.
  const editFilter = (draft: string, input: string, key: Key): void => {
    const next = editText(draft, input, key);
    if (key.return) changeView((state) => ({ ...state, filter: draft.trim(), draft: undefined }));
    else if (key.escape) changeView((state) => ({ ...state, filter: '', draft: undefined }));
    else if (next !== undefined) changeView((state) => ({ ...state, draft: next, filter: next.trim() }));
  };

  const editLogSearch = (draft: string, input: string, key: Key): void => {
    const next = editText(draft, input, key);
    if (key.return) changeView((state) => ({ ...state, logSearch: draft.trim(), logDraft: undefined }));
    else if (key.escape) changeView((state) => ({ ...state, logSearch: '', logDraft: undefined, logBack: 0 }));
    else if (next !== undefined) changeView((state) => ({ ...state, logDraft: next, logSearch: next.trim(), logBack: 0 }));
  };

  /** The text after a key typed into it; undefined for a key that is not typing. */
  const editText = (text: string, input: string, key: Key): string | undefined => {
    // Terminals send DEL (0x7f) for Backspace, which Ink reports as `delete`.
    if (key.backspace || key.delete) return text.slice(0, -1);
    if (!key.ctrl && !key.meta && !key.return && !key.escape && input.length > 0 && !/[\u0000-\u001f]/.test(input)) return text + input;
    return undefined;
  };

  // Ink hands a run of characters read in one chunk over as one input ("jjj", "/102\r"): each
  // character is a key of its own, seeing the view the one before it left (hence viewRef).
  const onInput = (input: string, key: Key): void => {
    for (const press of splitKeys(input, key)) if (!onKey(press.input, press.key)) return;
  };

  useInput(onInput, { isActive });
}
