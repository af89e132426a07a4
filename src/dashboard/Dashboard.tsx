/**
 * The dashboard screen: header, fleet table, the selected station in detail, the event log, key
 * hints. It reads the fleet from a `FleetStore` fed by the event stream, redrawing at most once per
 * flush interval, and acts through the control plane and the injected unlock.
 */
import { useMemo, useRef, useState } from 'react';
import { Box, Text, useApp, useInput, useStdin, type Key } from 'ink';
import type { Clock } from '../shared/clock.js';
import type { DashboardControl } from './control-connection.js';
import { createDashboardActions, type UnlockFunction } from './dashboard-actions.js';
import { EventLog } from './EventLog.js';
import { FleetTable, tableColumns } from './FleetTable.js';
import type { FleetStore } from './fleet-store.js';
import type { SimStation } from './sim-types.js';
import type { IconSet } from './format.js';
import { HelpOverlay, helpScrollMax } from './HelpOverlay.js';
import { splitKeys } from './key-chunks.js';
import { DETAIL_LINES, MIN_COLUMNS, MIN_ROWS, layoutFor, scrollTop, type ScreenLayout } from './layout.js';
import { StationDetail } from './StationDetail.js';
import { Footer, Header, StatusLine } from './StatusLines.js';
import { useClockTick } from './use-clock-tick.js';
import { useEventStream } from './use-event-stream.js';
import { useHealthProgress } from './use-health-progress.js';
import { useStationRefresh } from './use-station-refresh.js';
import { useTerminalSize } from './use-terminal-size.js';
import { useThrottledStore } from './use-throttled-store.js';

export interface DashboardProps {
  /** The control plane: actions, health, and the event stream the dashboard subscribes to. */
  control: DashboardControl;
  /** Where the stream's events go; the screen reads the fleet from here. */
  store: FleetStore;
  /** What `u` calls, with the selected station's token and lock id. */
  unlock: UnlockFunction;
  /** Timers of redraws and polling, and time for ages unless `simulatedNow` is given. */
  clock: Clock;
  /**
   * The simulator's time, against which the ages and countdowns of its timestamps are drawn: it
   * differs from real time with `--time-scale` or a manual clock.
   * @default clock.now
   */
  simulatedNow?: () => number;
  icons: IconSet;
  /** Shown in the header: where the simulator is. */
  title: string;
  /** Longest wait between an event and the redraw that shows it. @default 100 */
  flushIntervalMs?: number;
  /** How often `/sim/v1/health` is asked while the fleet connects. @default 500 */
  healthPollMs?: number;
  /** How often the selected station is fetched in full. @default 1000 */
  detailRefreshMs?: number;
}

interface ViewState {
  /** Selection by token, so it stays on its station when others come, go or are filtered. */
  selected: string | undefined;
  lockIndex: number;
  filter: string;
  /** The filter being typed; `undefined` when not typing one. */
  draft: string | undefined;
  help: boolean;
  /** First line of the help shown, where the terminal is too short for all of it. */
  helpTop: number;
}

const INITIAL_VIEW: ViewState = { selected: undefined, lockIndex: 0, filter: '', draft: undefined, help: false, helpTop: 0 };

export function Dashboard(props: DashboardProps) {
  const { control, store, clock, icons } = props;
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
  const [view, setView] = useState(INITIAL_VIEW);
  // Keys are handled between renders, and several can arrive in one chunk (fast typing, key
  // repeat, a paste): each must see what the key before it left, not what the last render saw.
  // So keys change the view in a ref at once, and the state only tells React to redraw.
  const viewRef = useRef(view);
  const changeView = (change: (current: ViewState) => ViewState): void => {
    viewRef.current = change(viewRef.current);
    setView(viewRef.current);
  };
  useEventStream(control, store);
  const actions = useMemo(() => createDashboardActions({ control, store, unlock: props.unlock }), [control, store, props.unlock]);
  const tokensFor = useFilteredTokens(store);

  const layout = layoutFor(columns, rows);
  const layoutRef = useRef(layout);
  layoutRef.current = layout;
  const { tokens: list, index: selectedIndex, token: selectedToken, station, lockIndex } = resolveSelection(view, tokensFor(view.filter), store);
  useStationRefresh(control, store, selectedToken, clock, props.detailRefreshMs ?? 1000);

  // The first row in view moves only as far as needed to keep the selection in view; a ref keeps
  // it between renders, since it follows from the selection rather than being state of its own.
  const topRef = useRef(0);
  const top = scrollTop(topRef.current, selectedIndex, layout.tableRows, list.length);
  topRef.current = top;
  const windowTokens = list.slice(top, top + layout.tableRows);
  const windowRows = windowTokens.map((token) => store.get(token));
  // One object per width, so rows whose station did not change skip their redraw (they are memo'd).
  const maxTokenLength = store.maxTokenLength;
  const columnsOfTable = useMemo(() => tableColumns(layout.width, maxTokenLength), [layout.width, maxTokenLength]);

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

  // Without a TTY on stdin there is no raw mode, and Ink throws if asked for it: view only then.
  useInput(onInput, { isActive: isRawModeSupported });

  if (!layout.fits) {
    // Keys still work (q quits), and the full screen comes back as soon as the terminal grows.
    return (
      <Box width="100%">
        {/* Wrapped, not cut: in a narrow terminal the size it needs is the part worth reading. */}
        <Text wrap="wrap" color="yellow">{`terminal too small (${columns}×${rows}): needs ${MIN_COLUMNS}×${MIN_ROWS} · q quits`}</Text>
      </Box>
    );
  }
  const bodyHeight = bodyHeightOf(layout);
  // Stations as last seen, while the stream is down or has not sent its snapshot again.
  const stale = store.hasSnapshot && !store.live;
  return (
    // 100%, not the columns this render was for: on a resize Ink lays this tree out at the new
    // width before React renders the next one, and a box wider than the terminal wraps.
    <Box flexDirection="column" width="100%" height={layout.height} overflow="hidden">
      <Header title={props.title} total={store.size} online={store.online} stale={stale} />
      <StatusLine
        health={health}
        stream={store.stream}
        live={store.live}
        filter={view.filter}
        matches={list.length}
        position={list.length === 0 ? 0 : selectedIndex + 1}
        width={layout.width}
        icons={icons}
        realNow={realNow}
      />
      {view.help ? (
        <HelpOverlay height={bodyHeight} icons={icons} top={view.helpTop} />
      ) : (
        <>
          <FleetTable
            rows={windowRows}
            tokens={windowTokens}
            selectedRow={selectedIndex - top}
            columns={columnsOfTable}
            height={layout.tableRows}
            icons={icons}
            now={now}
            stale={stale}
          />
          <StationDetail station={station} lockIndex={lockIndex} icons={icons} now={now} stale={stale} />
          <Text wrap="truncate" dimColor>
            {`── events ${'─'.repeat(Math.max(0, layout.width - 10))}`}
          </Text>
          <EventLog entries={store.log.entries.slice(-layout.logRows)} width={layout.width} height={layout.logRows} showClock={layout.showClock} />
        </>
      )}
      <Footer draft={view.draft} />
    </Box>
  );
}

/** Table header and rows, detail, log title and lines: what the help overlay covers. */
function bodyHeightOf(layout: ScreenLayout): number {
  return layout.tableRows + 1 + DETAIL_LINES + 1 + layout.logRows;
}

interface Selection {
  /** The stations listed, filter applied. */
  tokens: readonly string[];
  index: number;
  token: string | undefined;
  station: SimStation | undefined;
  lockIndex: number;
}

/** What the view's selection points at in the list; the first station when its own is not listed. */
function resolveSelection(view: ViewState, tokens: readonly string[], store: FleetStore): Selection {
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
function useFilteredTokens(store: FleetStore): (filter: string) => readonly string[] {
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
