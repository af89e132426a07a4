/**
 * Everything the dashboard screen draws, gathered for one render: the fleet from a `FleetStore`
 * fed by the event stream (redrawn at most once per flush interval), the view the keys change,
 * the terminal's layout, the selection and the rows in view, the log as searched and scrolled,
 * health, addresses and accounts. Dashboard.tsx only lays it out.
 */
import { useMemo, useRef } from 'react';
import { useApp, useStdin } from 'ink';
import { accountFor, createDashboardActions, type AccountChoice, type DashboardAccount } from './dashboard-actions.js';
import { describeEntry, type LogEntry } from './activity-log.js';
import type { DashboardAddresses } from './addresses.js';
import type { DashboardProps } from './dashboard-props.js';
import type { ApiFaultInForce } from './FaultMenu.js';
import { tableColumns, type TableColumns } from './FleetTable.js';
import { CAPTION_LINES } from './Caption.js';
import { bodyHeightOf, resolveSelection, useFilteredTokens, useViewState, type Selection, type ViewState } from './dashboard-view.js';
import { layoutFor, scrollTop, type ScreenLayout } from './layout.js';
import type { HealthProgress } from './use-health-progress.js';
import { useApiFaults } from './use-api-faults.js';
import { useClockTick } from './use-clock-tick.js';
import { useDashboardKeys } from './use-dashboard-keys.js';
import { useEventStream } from './use-event-stream.js';
import { useHealthProgress } from './use-health-progress.js';
import { useStationRefresh } from './use-station-refresh.js';
import { useTerminalSize } from './use-terminal-size.js';
import { useThrottledStore } from './use-throttled-store.js';
import type { SimStation } from '../client/sim-types.js';

export interface DashboardModel {
  view: ViewState;
  layout: ScreenLayout;
  /** The terminal's size, for the notice when it is too small. */
  columns: number;
  rows: number;
  /** Table header and rows, detail, log title and lines: what the help overlay covers. */
  bodyHeight: number;
  /** The table's rows and its header: the height of a panel in its place. */
  tableHeight: number;
  /** Keys are read (stdin is a TTY with raw mode). */
  keysActive: boolean;
  /** Whether no other key takes the caption's keys now: no filter or search being typed, no help, no fault menu. */
  captionKeysFree: () => boolean;
  /** The simulator's time, for ages and countdowns; `realNow` the wall clock's. */
  now: number;
  realNow: number;
  health: HealthProgress | undefined;
  /** Stations as last seen, while the stream is down or has not sent its snapshot again. */
  stale: boolean;
  addresses: DashboardAddresses;
  notices: readonly string[];
  accounts: readonly DashboardAccount[];
  /** The account `a` chose; and for the selected station, whom `u` unlocks as. */
  chosen: DashboardAccount | undefined;
  choice: AccountChoice | undefined;
  /** The stations listed (filter applied), the selected one and its lock. */
  selection: Selection;
  /** The table's rows in view, their tokens, and where the selection is among them. */
  windowRows: readonly (SimStation | undefined)[];
  windowTokens: readonly string[];
  selectedRow: number;
  tableColumns: TableColumns;
  apiFaults: readonly ApiFaultInForce[] | undefined;
  /** Log entries matching the search, and the part of them in view, `back` entries from the newest. */
  logEntries: readonly LogEntry[];
  shownLog: readonly LogEntry[];
  back: number;
}

/**
 * The rows of the table in view. The first row in view moves only as far as needed to keep the
 * selection in view; a ref keeps it between renders, since it follows from the selection rather
 * than being state of its own.
 */
function useTableWindow(list: readonly string[], selectedIndex: number, tableRows: number, store: DashboardProps['store']) {
  const topRef = useRef(0);
  const top = scrollTop(topRef.current, selectedIndex, tableRows, list.length);
  topRef.current = top;
  const windowTokens = list.slice(top, top + tableRows);
  const windowRows = windowTokens.map((token) => store.get(token));
  return { top, windowTokens, windowRows };
}

export function useDashboardModel(props: DashboardProps): DashboardModel {
  const { control, store, clock } = props;
  // Subscribes this component to the store: it re-renders when a batch of changes is flushed.
  useThrottledStore(store, props.flushIntervalMs ?? 100, clock);
  useClockTick(clock, 1000);
  // Read at each render, not at the last tick: a change since then (a reconnect scheduled, a manual
  // clock's advance) shows with the redraw it causes. Rows redraw only where their text changed.
  const now = props.simulatedNow ? props.simulatedNow() : clock.now();
  const realNow = clock.now();
  const health = useHealthProgress(control, clock, props.healthPollMs ?? 500);
  const { columns, rows } = useTerminalSize();
  const { exit } = useApp();
  const { isRawModeSupported } = useStdin();
  const { view, viewRef, changeView } = useViewState();
  useEventStream(control, store);
  const accounts = useMemo<readonly DashboardAccount[]>(
    () => props.accounts ?? (props.unlock ? [{ unlock: props.unlock }] : []),
    [props.accounts, props.unlock],
  );
  const actions = useMemo(() => createDashboardActions({ control, store, accounts }), [control, store, accounts]);
  const tokensFor = useFilteredTokens(store);
  const apiFaults = useApiFaults(control, view.panel === 'faults');

  const layout = layoutFor(columns, rows, props.caption ? CAPTION_LINES : 0);
  const layoutRef = useRef(layout);
  layoutRef.current = layout;
  const selection = resolveSelection(view, tokensFor(view.filter), store);
  const { tokens: list, index: selectedIndex, token: selectedToken, station } = selection;
  useStationRefresh(control, store, selectedToken, { clock, everyMs: props.detailRefreshMs ?? 1000 });

  const { top, windowTokens, windowRows } = useTableWindow(list, selectedIndex, layout.tableRows, store);
  // One object per width, so rows whose station did not change skip their redraw (they are memo'd).
  const maxTokenLength = store.maxTokenLength;
  const columnsOfTable = useMemo(() => tableColumns(layout.width, maxTokenLength), [layout.width, maxTokenLength]);

  const logEntries = searchLog(store.log.entries, view.logSearch);
  const logEntriesRef = useRef(logEntries);
  logEntriesRef.current = logEntries;
  // Without a TTY on stdin there is no raw mode: view only then.
  useDashboardKeys({
    viewRef,
    changeView,
    layoutRef,
    tokensFor,
    store,
    actions,
    accountCount: accounts.length,
    logEntryCount: () => logEntriesRef.current.length,
    onApiFaultsChanged: apiFaults.refresh,
    exit,
    isActive: isRawModeSupported,
  });

  const back = Math.min(view.logBack, Math.max(0, logEntries.length - 1));
  return {
    view,
    layout,
    columns,
    rows,
    bodyHeight: bodyHeightOf(layout),
    tableHeight: layout.tableRows + 1,
    keysActive: isRawModeSupported,
    captionKeysFree: () => {
      const current = viewRef.current;
      return current.draft === undefined && current.logDraft === undefined && !current.help && current.panel !== 'faults';
    },
    now,
    realNow,
    health,
    stale: store.hasSnapshot && !store.live,
    addresses: props.addresses ?? { api: props.title, ...(health?.mqtt ? { broker: health.mqtt } : {}) },
    notices: props.notices ?? [],
    accounts,
    chosen: accounts[Math.min(view.account, Math.max(0, accounts.length - 1))],
    choice: station ? accountFor(accounts, view.account, station.token) : undefined,
    selection,
    windowRows,
    windowTokens,
    selectedRow: selectedIndex - top,
    tableColumns: columnsOfTable,
    apiFaults: apiFaults.faults,
    logEntries,
    shownLog: logEntries.slice(Math.max(0, logEntries.length - back - layout.logRows * 2), logEntries.length - back),
    back,
  };
}

/** The log's entries whose text contains `search` (any case); all of them without one. */
function searchLog(entries: readonly LogEntry[], search: string): readonly LogEntry[] {
  if (search === '') return entries;
  const needle = search.toLowerCase();
  return entries.filter((entry) => describeEntry(entry).text.toLowerCase().includes(needle));
}
