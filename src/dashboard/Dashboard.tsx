/**
 * The dashboard screen: header and addresses, an optional caption, the fleet table (or in its
 * place the fault menu, the info panel or the fleet overview), the selected station in detail, the
 * event log, key hints. What it draws comes from `useDashboardModel` (use-dashboard-model.ts);
 * this file only lays it out.
 */
import { Box } from 'ink';
import { Text } from './Text.js';
import { FaultMenu } from './FaultMenu.js';
import { FleetOverview } from './FleetOverview.js';
import { InfoPanel } from './InfoPanel.js';
import { ColourContext } from './Text.js';
import { latencySlots, summariseLatencies } from './unlock-latency.js';
import { EventLog } from './EventLog.js';
import { FleetTable } from './FleetTable.js';
import { Caption } from './Caption.js';
import type { DashboardProps } from './dashboard-props.js';
import { HelpOverlay } from './HelpOverlay.js';
import { MIN_COLUMNS, MIN_ROWS } from './layout.js';
import { StationDetail } from './StationDetail.js';
import { AddressLine, Footer, Header, StatusLine } from './StatusLines.js';
import { useDashboardModel, type DashboardModel } from './use-dashboard-model.js';

export type { DashboardProps } from './dashboard-props.js';

export function Dashboard(props: DashboardProps) {
  return (
    <ColourContext.Provider value={props.colour ?? true}>
      <DashboardScreen {...props} />
    </ColourContext.Provider>
  );
}

function DashboardScreen(props: DashboardProps) {
  const { store, icons } = props;
  const model = useDashboardModel(props);
  const { view, layout, now, selection, choice } = model;
  const { tokens, station, lockIndex } = selection;
  if (!layout.fits) {
    // Keys still work (q quits), and the full screen comes back as soon as the terminal grows.
    return (
      <Box width="100%">
        {/* Wrapped, not cut: in a narrow terminal the size it needs is the part worth reading. */}
        <Text wrap="wrap" color="yellow">{`terminal too small (${model.columns}×${model.rows}): needs ${MIN_COLUMNS}×${MIN_ROWS + layout.captionLines} · q quits`}</Text>
      </Box>
    );
  }
  const latencies = store.log.latencies;
  return (
    // 100%, not the columns this render was for: on a resize Ink lays this tree out at the new
    // width before React renders the next one, and a box wider than the terminal wraps.
    <Box flexDirection="column" width="100%" height={layout.height} overflow="hidden">
      <Header
        total={store.size}
        online={store.online}
        stale={model.stale}
        account={model.chosen?.email ?? (model.accounts.length === 0 ? 'no account' : undefined)}
        accounts={model.accounts.length}
      />
      <AddressLine addresses={model.addresses} notices={model.notices.length} width={layout.width} />
      {props.caption && (
        <Caption
          source={props.caption}
          keysActive={model.keysActive}
          // The story's keys only when no other key takes them: a filter or search being typed, the help, the fault menu.
          keysFree={model.captionKeysFree}
        />
      )}
      <StatusLine
        health={model.health}
        stream={store.stream}
        live={store.live}
        filter={view.filter}
        matches={tokens.length}
        position={tokens.length === 0 ? 0 : selection.index + 1}
        width={layout.width}
        icons={icons}
        realNow={model.realNow}
        latency={latencySlots(latencies, now, 12)}
      />
      {view.help ? (
        <HelpOverlay height={model.bodyHeight} icons={icons} top={view.helpTop} />
      ) : (
        <>
          <MainPanel model={model} store={store} icons={icons} />
          <StationDetail
            station={station}
            lockIndex={lockIndex}
            icons={icons}
            now={now}
            stale={model.stale}
            battery={station ? store.batteryHistory(station.token) : []}
            fixtureVoltage={station ? store.fixtureVoltage(station.token) : undefined}
            unlockAs={choice ? { account: choice.account?.email, chosen: model.chosen?.email, chosenCannot: choice.chosenCannot } : undefined}
            width={layout.width}
          />
          <Text wrap="truncate" dimColor>
            {logTitle(layout.width, { search: view.logSearch, matching: model.logEntries.length, total: store.log.entries.length, back: model.back })}
          </Text>
          <EventLog entries={model.shownLog} width={layout.width} height={layout.logRows} showClock={layout.showClock} />
        </>
      )}
      <Footer draft={view.draft} logDraft={view.logDraft} width={layout.width} />
    </Box>
  );
}

/** The table, or a panel in its place: the fault menu, the info panel or the fleet overview. */
function MainPanel({ model, store, icons }: { model: DashboardModel; store: DashboardProps['store']; icons: DashboardProps['icons'] }) {
  const { view, layout, now, selection, tableHeight } = model;
  const { station, lockIndex } = selection;
  const latencies = store.log.latencies;
  if (view.panel === 'faults') {
    return (
      <FaultMenu
        station={station}
        lockId={station?.locks[lockIndex]?.lockId}
        scope={view.faultScope}
        apiFaults={model.apiFaults}
        height={tableHeight}
        width={layout.width}
      />
    );
  }
  if (view.panel === 'info') {
    return <InfoPanel addresses={model.addresses} notices={model.notices} accounts={model.accounts} account={view.account} height={tableHeight} />;
  }
  if (view.panel === 'overview') {
    return (
      <FleetOverview
        overview={store.overview()}
        latency={summariseLatencies(latencies, now, Math.max(1, tableHeight - 6))}
        slots={latencySlots(latencies, now, 20)}
        icons={icons}
        height={tableHeight}
        width={layout.width}
      />
    );
  }
  return (
    <FleetTable
      rows={model.windowRows}
      tokens={model.windowTokens}
      selectedRow={model.selectedRow}
      columns={model.tableColumns}
      height={layout.tableRows}
      icons={icons}
      now={now}
      stale={model.stale}
    />
  );
}

/** `── events ─── search "ST-1005": 3 of 120 · 5 newer ([ ] scroll) ───`. */
export function logTitle(width: number, { search, matching, total, back }: { search: string; matching: number; total: number; back: number }): string {
  const parts = [
    ...(search === '' ? [] : [`search "${search}": ${matching} of ${total}`]),
    ...(back === 0 ? [] : [`${back} newer below (] or Esc)`]),
  ];
  const head = `── events ${parts.length === 0 ? '' : `· ${parts.join(' · ')} `}`;
  return head + '─'.repeat(Math.max(0, width - head.length));
}
