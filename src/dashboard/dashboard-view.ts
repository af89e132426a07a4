/**
 * What the dashboard shows, apart from the fleet itself: the selection, the filter, the help
 * overlay. Kept as one plain value that keys change (dashboard-keys.ts) and the screen reads
 * (Dashboard.tsx), with what follows from it: the selected station in the filtered list.
 */
import { useRef, useState } from 'react';
import type { FleetStore } from './fleet-store.js';
import { DETAIL_LINES, type ScreenLayout } from './layout.js';
import type { SimStation } from '../client/sim-types.js';

/** What takes the table's place: the fault menu, the addresses and notices, the fleet in numbers. */
export type Panel = 'faults' | 'info' | 'overview';

export interface ViewState {
  /** Selection by token, so it stays on its station when others come, go or are filtered. */
  selected: string | undefined;
  lockIndex: number;
  filter: string;
  /** The filter being typed; `undefined` when not typing one. It applies as it is typed. */
  draft: string | undefined;
  help: boolean;
  /** First line of the help shown, where the terminal is too short for all of it. */
  helpTop: number;
  panel: Panel | undefined;
  /** The account `u` unlocks as: an index into the dashboard's accounts (`a` moves it on). */
  account: number;
  /** Whether the fault menu adds to the selected lock or to the whole station. */
  faultScope: 'lock' | 'station';
  /** Log entries scrolled back from the newest (`[` `]`); 0 follows the log as it grows. */
  logBack: number;
  /** Only log entries containing this (any case) are shown. */
  logSearch: string;
  /** The log search being typed (`e`); applies as it is typed. */
  logDraft: string | undefined;
}

export const INITIAL_VIEW: ViewState = {
  selected: undefined,
  lockIndex: 0,
  filter: '',
  draft: undefined,
  help: false,
  helpTop: 0,
  panel: undefined,
  account: 0,
  faultScope: 'lock',
  logBack: 0,
  logSearch: '',
  logDraft: undefined,
};

/**
 * The view, for the screen and for the keys. Keys are handled between renders, and several can
 * arrive in one chunk (fast typing, key repeat, a paste): each must see what the key before it
 * left, not what the last render saw. So keys change the view in a ref at once (`changeView`),
 * and the state only tells React to redraw.
 */
export function useViewState(): { view: ViewState; viewRef: { readonly current: ViewState }; changeView: (change: (current: ViewState) => ViewState) => void } {
  const [view, setView] = useState(INITIAL_VIEW);
  const viewRef = useRef(view);
  const changeView = (change: (current: ViewState) => ViewState): void => {
    viewRef.current = change(viewRef.current);
    setView(viewRef.current);
  };
  return { view, viewRef, changeView };
}

/** Table header and rows, detail, log title and lines: what the help overlay covers. */
export function bodyHeightOf(layout: ScreenLayout): number {
  return layout.tableRows + 1 + DETAIL_LINES + 1 + layout.logRows;
}

export interface Selection {
  /** The stations listed, filter applied. */
  tokens: readonly string[];
  index: number;
  token: string | undefined;
  station: SimStation | undefined;
  lockIndex: number;
}

/** What the view's selection points at in the list; the first station when its own is not listed. */
export function resolveSelection(view: ViewState, tokens: readonly string[], store: FleetStore): Selection {
  const found = view.selected === undefined ? -1 : tokens.indexOf(view.selected);
  const index = found >= 0 ? found : 0;
  const token = tokens[index];
  const station = token === undefined ? undefined : store.get(token);
  const lockIndex = station ? Math.min(view.lockIndex, Math.max(0, station.locks.length - 1)) : 0;
  return { tokens, index, token, station, lockIndex };
}

/**
 * The tokens matching a filter, recomputed only when the filter or the set of stations changes:
 * cheap for 10,000 tokens, but not free on every redraw and every key.
 */
export function useFilteredTokens(store: FleetStore): (filter: string) => readonly string[] {
  const cache = useRef<{ membership: number; filter: string; tokens: readonly string[] }>(undefined);
  return (filter) => {
    const hit = cache.current;
    if (hit && hit.membership === store.membershipVersion && hit.filter === filter) return hit.tokens;
    const needle = filter.toLowerCase();
    const tokens = needle === '' ? store.tokens : store.tokens.filter((token) => token.toLowerCase().includes(needle));
    cache.current = { membership: store.membershipVersion, filter, tokens };
    return tokens;
  };
}
