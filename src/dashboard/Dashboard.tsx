/**
 * The dashboard screen: header, fleet table, the selected station in detail, the event log, key
 * hints. It reads the fleet from a `FleetStore` fed by the event stream, redrawing at most once per
 * flush interval, and acts through the control plane and the injected unlock.
 */
import { useMemo, useRef, useState } from 'react';
import { Box, Text, useApp, useStdin } from 'ink';
import type { Clock } from '../shared/clock.js';
import type { DashboardControl } from '../client/control-client.js';
import { createDashboardActions, type UnlockFunction } from './dashboard-actions.js';
import { EventLog } from './EventLog.js';
import { FleetTable, tableColumns } from './FleetTable.js';
import type { FleetStore } from './fleet-store.js';
import type { IconSet } from './format.js';
import { Caption, CAPTION_LINES, type CaptionSource } from './Caption.js';
import { bodyHeightOf, INITIAL_VIEW, resolveSelection, useFilteredTokens, type ViewState } from './dashboard-view.js';
import { HelpOverlay } from './HelpOverlay.js';
import { MIN_COLUMNS, MIN_ROWS, layoutFor, scrollTop } from './layout.js';
import { StationDetail } from './StationDetail.js';
import { Footer, Header, StatusLine } from './StatusLines.js';
import { useClockTick } from './use-clock-tick.js';
import { useDashboardKeys } from './use-dashboard-keys.js';
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
  /** A narrated story (`station-sim demo`): its caption above the table, its keys `space` and `n`. @default none */
  caption?: CaptionSource;
}

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

  const layout = layoutFor(columns, rows - (props.caption ? CAPTION_LINES : 0));
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

  // Without a TTY on stdin there is no raw mode: view only then.
  useDashboardKeys({ viewRef, changeView, layoutRef, tokensFor, store, actions, exit, isActive: isRawModeSupported });

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
    <Box flexDirection="column" width="100%" height={layout.height + (props.caption ? CAPTION_LINES : 0)} overflow="hidden">
      <Header title={props.title} total={store.size} online={store.online} stale={stale} />
      {props.caption && <Caption source={props.caption} keysActive={isRawModeSupported} keysFree={() => viewRef.current.draft === undefined && !viewRef.current.help} />}
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
