/**
 * What each dashboard key does (README, "Dashboard"): moving, filtering, help, the panels (faults,
 * info, overview), the log's scrolling and search, the account, and the actions on the selected
 * station and lock. A pure function of the view and the key: it answers the next view and the
 * actions to run, which `useDashboardKeys` (use-dashboard-keys.ts) carries out.
 */
import type { Key } from 'ink';
import { API_FAULT_MENU, FAULT_MENU } from './dashboard-actions.js';
import { bodyHeightOf, type Panel, type Selection, type ViewState } from './dashboard-view.js';
import { helpScrollMax } from './HelpOverlay.js';
import type { ScreenLayout } from './layout.js';
import type { SimStation } from '../client/sim-types.js';
import type { FaultKind } from '../contract/fault-schema.js';

/** What a key asks for besides a new view; each maps onto one call of `DashboardActions`. */
export type KeyAction =
  | { type: 'quit' }
  | { type: 'unlock'; token: string; lockId: string; account: number }
  | { type: 'toggleConnection'; station: SimStation }
  | { type: 'toggleBattery'; station: SimStation }
  | { type: 'toggleJam'; station: SimStation; lockId: string }
  | { type: 'reboot'; station: SimStation }
  /** The station's link to the next profile (docs/links.md). */
  | { type: 'cycleLink'; station: SimStation }
  | { type: 'addFault'; station: SimStation; kind: FaultKind; lockId: string | undefined }
  | { type: 'clearFaults'; station: SimStation }
  /** Then asks for the `/v1` faults in force again. */
  | { type: 'addApiFault'; station: SimStation; index: number }
  /** Then asks for the `/v1` faults in force again. */
  | { type: 'clearApiFaults' }
  /** The fault menu opened or closed: ask for the `/v1` faults in force. */
  | { type: 'refreshApiFaults' };

/** What a key sees besides the view: what the last render drew. */
export interface KeyContext {
  /** The layout of the last render: a page is its table's rows, a log scroll half its log. */
  layout: ScreenLayout;
  /** How many accounts `a` goes through. */
  accountCount: number;
  /** Log entries there are to scroll back through (search applied). */
  logEntryCount: number;
  /** The selection in a view: the stations its filter lists, the selected one and its lock. */
  selectionOf: (view: ViewState) => Selection;
}

export interface KeyResult {
  view: ViewState;
  actions: readonly KeyAction[];
}

const NONE: readonly KeyAction[] = [];

/** The view after one key, and what the key asks to be done. `quit` comes alone, with the view unchanged. */
export function reduceKey(view: ViewState, input: string, key: Key, context: KeyContext): KeyResult {
  const typing = view.draft !== undefined || view.logDraft !== undefined;
  if ((input === 'c' && key.ctrl) || (input === 'q' && !typing)) return { view, actions: [{ type: 'quit' }] };
  if (view.draft !== undefined) return only(editFilter(view, view.draft, input, key));
  if (view.logDraft !== undefined) return only(editLogSearch(view, view.logDraft, input, key));
  if (input === '?') return only({ ...view, help: !view.help, helpTop: 0 });
  if (key.escape) return only(escape(view));
  // Behind the help overlay only the keys above and its own scrolling work: nothing should
  // change out of sight.
  if (view.help) return only(scrollHelp(view, input, key, context.layout));
  if (input === '/') return only({ ...view, draft: '' });
  if (input === 'e') return only({ ...view, logDraft: '', logBack: 0 });
  if (input === '[' || input === ']') return only(scrollLog(view, input === '[' ? 1 : -1, context));
  if (input === 'a') return only({ ...view, account: context.accountCount === 0 ? 0 : (view.account + 1) % context.accountCount });
  if (input === 'f' || input === 'i' || input === 's') return togglePanel(view, input === 'f' ? 'faults' : input === 'i' ? 'info' : 'overview');
  const selection = context.selectionOf(view);
  return (view.panel === 'faults' ? onFaultKey(view, input, selection) : undefined) ?? onSelectionKey(view, { input, key }, selection, context.layout);
}

function only(view: ViewState): KeyResult {
  return { view, actions: NONE };
}

/** Esc closes what is open, the innermost first: help, a panel, the log search, the filter. */
function escape(view: ViewState): ViewState {
  if (view.help) return { ...view, help: false };
  if (view.panel !== undefined) return { ...view, panel: undefined };
  if (view.logSearch !== '' || view.logBack !== 0) return { ...view, logSearch: '', logBack: 0 };
  return { ...view, filter: '' };
}

function togglePanel(view: ViewState, panel: Panel): KeyResult {
  const next: ViewState = { ...view, panel: view.panel === panel ? undefined : panel };
  return { view: next, actions: panel === 'faults' ? [{ type: 'refreshApiFaults' }] : NONE };
}

/** Half a log's height at a time; never past the oldest entry. */
function scrollLog(view: ViewState, direction: 1 | -1, context: KeyContext): ViewState {
  const step = Math.max(1, Math.floor(context.layout.logRows / 2));
  const max = Math.max(0, context.logEntryCount - 1);
  return { ...view, logBack: Math.max(0, Math.min(max, view.logBack + direction * step)) };
}

function scrollHelp(view: ViewState, input: string, key: Key, layout: ScreenLayout): ViewState {
  const step = key.upArrow || input === 'k' ? -1 : key.downArrow || input === 'j' ? 1 : 0;
  const max = helpScrollMax(bodyHeightOf(layout));
  return step === 0 ? view : { ...view, helpTop: Math.max(0, Math.min(max, view.helpTop + step)) };
}

/** The fault menu's own keys; undefined for a key it leaves to the rest. */
function onFaultKey(view: ViewState, input: string, { station, lockIndex }: Selection): KeyResult | undefined {
  if (!station) return undefined;
  const digit = /^[1-9]$/.test(input) ? Number(input) : undefined;
  const lockId = view.faultScope === 'lock' ? station.locks[lockIndex]?.lockId : undefined;
  if (digit !== undefined && digit <= FAULT_MENU.length) return { view, actions: [{ type: 'addFault', station, kind: FAULT_MENU[digit - 1]!.kind, lockId }] };
  if (digit !== undefined && digit - FAULT_MENU.length <= API_FAULT_MENU.length) return { view, actions: [{ type: 'addApiFault', station, index: digit - FAULT_MENU.length - 1 }] };
  if (input === '0') return { view, actions: [{ type: 'clearApiFaults' }] };
  if (input === 'c') return { view, actions: [{ type: 'clearFaults', station }] };
  if (input === 'l') return only({ ...view, faultScope: view.faultScope === 'lock' ? 'station' : 'lock' });
  return undefined;
}

/** Moving through the list and its locks, and the actions on the selected station and lock. */
function onSelectionKey(view: ViewState, { input, key }: { input: string; key: Key }, selection: Selection, layout: ScreenLayout): KeyResult {
  const { tokens, index, station, lockIndex: lock } = selection;
  const page = layout.tableRows;
  const select = (at: number): KeyResult => {
    if (tokens.length === 0) return only(view);
    const token = tokens[Math.max(0, Math.min(tokens.length - 1, at))];
    return only({ ...view, selected: token, lockIndex: 0 });
  };
  const selectLock = (delta: number): KeyResult => {
    const count = station?.locks.length ?? 0;
    return only(count > 0 ? { ...view, lockIndex: (((lock + delta) % count) + count) % count } : view);
  };
  if (key.upArrow || input === 'k') return select(index - 1);
  if (key.downArrow || input === 'j') return select(index + 1);
  if (key.pageUp) return select(index - page);
  if (key.pageDown) return select(index + page);
  if (key.home || input === 'g') return select(0);
  if (key.end || input === 'G') return select(tokens.length - 1);
  if (key.leftArrow || (key.tab && key.shift)) return selectLock(-1);
  if (key.rightArrow || key.tab) return selectLock(1);
  if (!station) return only(view);
  const lockId = station.locks[lock]?.lockId;
  const act = (action: KeyAction): KeyResult => ({ view, actions: [action] });
  if (input === 'u' && lockId !== undefined) return act({ type: 'unlock', token: station.token, lockId, account: view.account });
  if (input === 'o') return act({ type: 'toggleConnection', station });
  if (input === 'b') return act({ type: 'toggleBattery', station });
  if (input === 'x' && lockId !== undefined) return act({ type: 'toggleJam', station, lockId });
  if (input === 'r') return act({ type: 'reboot', station });
  if (input === 'l') return act({ type: 'cycleLink', station });
  return only(view);
}

// The filter applies as it is typed; Enter keeps it, Esc clears it.
function editFilter(view: ViewState, draft: string, input: string, key: Key): ViewState {
  const next = editText(draft, input, key);
  if (key.return) return { ...view, filter: draft.trim(), draft: undefined };
  if (key.escape) return { ...view, filter: '', draft: undefined };
  return next === undefined ? view : { ...view, draft: next, filter: next.trim() };
}

function editLogSearch(view: ViewState, draft: string, input: string, key: Key): ViewState {
  const next = editText(draft, input, key);
  if (key.return) return { ...view, logSearch: draft.trim(), logDraft: undefined };
  if (key.escape) return { ...view, logSearch: '', logDraft: undefined, logBack: 0 };
  return next === undefined ? view : { ...view, logDraft: next, logSearch: next.trim(), logBack: 0 };
}

/** The text after a key typed into it; undefined for a key that is not typing. */
function editText(text: string, input: string, key: Key): string | undefined {
  // Terminals send DEL (0x7f) for Backspace, which Ink reports as `delete`.
  if (key.backspace || key.delete) return text.slice(0, -1);
  if (!key.ctrl && !key.meta && !key.return && !key.escape && input.length > 0 && !/[\u0000-\u001f]/.test(input)) return text + input;
  return undefined;
}
