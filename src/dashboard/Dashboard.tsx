/**
 * The dashboard screen: header and addresses, an optional caption, the fleet table (or in its
 * place the fault menu, the info panel or the fleet overview), the selected station in detail, the
 * event log, key hints. It reads the fleet from a `FleetStore` fed by the event stream, redrawing at
 * most once per flush interval, and acts through the control plane and the accounts' unlocks.
 */
import { useCallback, useEffect, useMemo, useRef, useState, type ReactNode } from 'react';
import { Box, useApp, useStdin } from 'ink';
import { Text } from './Text.js';
import type { Clock } from '../shared/clock.js';
import type { DashboardControl } from '../client/control-client.js';
import { accountFor, accountName, createDashboardActions, type DashboardAccount, type UnlockFunction } from './dashboard-actions.js';
import { describeEntry, type LogEntry } from './activity-log.js';
import type { DashboardAddresses } from './addresses.js';
import { FaultMenu, type ApiFaultInForce } from './FaultMenu.js';
import { FleetOverview } from './FleetOverview.js';
import { InfoPanel } from './InfoPanel.js';
import { ColourContext } from './Text.js';
import { latencySlots, summariseLatencies } from './unlock-latency.js';
import { EventLog } from './EventLog.js';
import { FleetTable, tableColumns } from './FleetTable.js';
import type { FleetStore } from './fleet-store.js';
import type { IconSet } from './format.js';
import { Caption, CAPTION_LINES, type CaptionSource } from './Caption.js';
import { bodyHeightOf, INITIAL_VIEW, resolveSelection, useFilteredTokens, type ViewState } from './dashboard-view.js';
import { HelpOverlay } from './HelpOverlay.js';
import { MIN_COLUMNS, MIN_ROWS, layoutFor, scrollTop } from './layout.js';
import { StationDetail } from './StationDetail.js';
import { AddressLine, Footer, Header, StatusLine } from './StatusLines.js';
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
  /**
   * The accounts `u` can unlock as, in the order `a` goes through them (the fixture's, for `up`).
   * @default one account without a name that unlocks with `unlock`
   */
  accounts?: readonly DashboardAccount[];
  /** What `u` calls, with the selected station's token and lock id, where no `accounts` are given. */
  unlock?: UnlockFunction;
  /** Timers of redraws and polling, and time for ages unless `simulatedNow` is given. */
  clock: Clock;
  /**
   * The simulator's time, against which the ages and countdowns of its timestamps are drawn: it
   * differs from real time with `--time-scale` or a manual clock.
   * @default clock.now
   */
  simulatedNow?: () => number;
  icons: IconSet;
  /** Where the simulator is: its base URL, the API's address where `addresses` does not say more. */
  title: string;
  /**
   * The addresses the header shows. @default the API at `title`, and the broker as
   * `/sim/v1/health` names it
   */
  addresses?: DashboardAddresses;
  /** What the simulator said as it started (a port taken, …): counted in the header, read with `i`. @default none */
  notices?: readonly string[];
  /** Colours on; `startDashboard` turns them off for `NO_COLOR`. @default true */
  colour?: boolean;
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
  return (
    <ColourContext.Provider value={props.colour ?? true}>
      <DashboardScreen {...props} />
    </ColourContext.Provider>
  );
}

function DashboardScreen(props: DashboardProps) {
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

  if (!layout.fits) {
    // Keys still work (q quits), and the full screen comes back as soon as the terminal grows.
    return (
      <Box width="100%">
        {/* Wrapped, not cut: in a narrow terminal the size it needs is the part worth reading. */}
        <Text wrap="wrap" color="yellow">{`terminal too small (${columns}×${rows}): needs ${MIN_COLUMNS}×${MIN_ROWS + layout.captionLines} · q quits`}</Text>
      </Box>
    );
  }
  const bodyHeight = bodyHeightOf(layout);
  // Stations as last seen, while the stream is down or has not sent its snapshot again.
  const stale = store.hasSnapshot && !store.live;
  const addresses: DashboardAddresses = props.addresses ?? { api: props.title, ...(health?.mqtt ? { broker: health.mqtt } : {}) };
  const notices = props.notices ?? [];
  const chosen = accounts[Math.min(view.account, Math.max(0, accounts.length - 1))];
  const choice = station ? accountFor(accounts, view.account, station.token) : undefined;
  const latencies = store.log.latencies;
  const back = Math.min(view.logBack, Math.max(0, logEntries.length - 1));
  const shownLog = logEntries.slice(Math.max(0, logEntries.length - back - layout.logRows * 2), logEntries.length - back);
  const tableHeight = layout.tableRows + 1;
  return (
    // 100%, not the columns this render was for: on a resize Ink lays this tree out at the new
    // width before React renders the next one, and a box wider than the terminal wraps.
    <Box flexDirection="column" width="100%" height={layout.height} overflow="hidden">
      <Header
        total={store.size}
        online={store.online}
        stale={stale}
        account={chosen?.email ?? (accounts.length === 0 ? 'no account' : undefined)}
        accounts={accounts.length}
      />
      <AddressLine addresses={addresses} notices={notices.length} width={layout.width} />
      {props.caption && (
        <Caption
          source={props.caption}
          keysActive={isRawModeSupported}
          // The story's keys only when no other key takes them: a filter or search being typed, the help, the fault menu.
          keysFree={() => {
            const view = viewRef.current;
            return view.draft === undefined && view.logDraft === undefined && !view.help && view.panel !== 'faults';
          }}
        />
      )}
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
        latency={latencySlots(latencies, now, 12)}
      />
      {view.help ? (
        <HelpOverlay height={bodyHeight} icons={icons} top={view.helpTop} />
      ) : (
        <>
          {/* The table, or a panel in its place. */}
          {view.panel === 'faults' ? (
            <FaultMenu
              station={station}
              lockId={station?.locks[lockIndex]?.lockId}
              scope={view.faultScope}
              apiFaults={apiFaults.faults}
              height={tableHeight}
              width={layout.width}
            />
          ) : view.panel === 'info' ? (
            <InfoPanel addresses={addresses} notices={notices} accounts={accounts} account={view.account} height={tableHeight} />
          ) : view.panel === 'overview' ? (
            <FleetOverview
              overview={store.overview()}
              latency={summariseLatencies(latencies, now, Math.max(1, tableHeight - 6))}
              slots={latencySlots(latencies, now, 20)}
              icons={icons}
              height={tableHeight}
              width={layout.width}
            />
          ) : (
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
          )}
          <StationDetail
            station={station}
            lockIndex={lockIndex}
            icons={icons}
            now={now}
            stale={stale}
            battery={station ? store.batteryHistory(station.token) : []}
            fixtureVoltage={station ? store.fixtureVoltage(station.token) : undefined}
            unlockAs={choice ? { account: choice.account?.email, chosen: chosen?.email, chosenCannot: choice.chosenCannot } : undefined}
            width={layout.width}
          />
          <Text wrap="truncate" dimColor>
            {logTitle(layout.width, view.logSearch, logEntries.length, store.log.entries.length, back)}
          </Text>
          <EventLog entries={shownLog} width={layout.width} height={layout.logRows} showClock={layout.showClock} />
        </>
      )}
      <Footer draft={view.draft} logDraft={view.logDraft} width={layout.width} />
    </Box>
  );
}

/** The log's entries whose text contains `search` (any case); all of them without one. */
function searchLog(entries: readonly LogEntry[], search: string): readonly LogEntry[] {
  if (search === '') return entries;
  const needle = search.toLowerCase();
  return entries.filter((entry) => describeEntry(entry).text.toLowerCase().includes(needle));
}

/** `── events ─── search "ST-1005": 3 of 120 · 5 newer ([ ] scroll) ───`. */
export function logTitle(width: number, search: string, matching: number, total: number, back: number): string {
  const parts = [
    ...(search === '' ? [] : [`search "${search}": ${matching} of ${total}`]),
    ...(back === 0 ? [] : [`${back} newer below (] or Esc)`]),
  ];
  const head = `── events ${parts.length === 0 ? '' : `· ${parts.join(' · ')} `}`;
  return head + '─'.repeat(Math.max(0, width - head.length));
}

/**
 * The `/v1` faults in force, fetched while the fault menu is open and whenever `refresh` is
 * called (after the menu adds or clears one).
 */
function useApiFaults(control: DashboardControl, open: boolean): { faults: readonly ApiFaultInForce[] | undefined; refresh: () => void } {
  const [faults, setFaults] = useState<readonly ApiFaultInForce[]>();
  const [asked, setAsked] = useState(0);
  const refresh = useCallback(() => setAsked((count) => count + 1), []);
  useEffect(() => {
    if (!open) return;
    let stopped = false;
    control.apiFaults().then(
      (list) => {
        if (!stopped) setFaults(list);
      },
      () => {
        if (!stopped) setFaults(undefined);
      },
    );
    return () => {
      stopped = true;
    };
  }, [control, open, asked]);
  return { faults, refresh };
}
