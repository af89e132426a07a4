/**
 * The fleet as a table. Only the rows in view are rendered (the caller passes that window), so a
 * fleet of 10,000 stations costs as much to draw as one of ten.
 */
import { memo } from 'react';
import { Box } from 'ink';
import { Text } from './Text.js';
import {
  BATTERY_COLOURS,
  LOCK_COLOURS,
  batteryGauge,
  fit,
  formatAge,
  formatVolts,
  lockLook,
  type IconSet,
} from './format.js';
import type { SimStation } from '../client/sim-types.js';

export interface TableColumns {
  token: number;
  /** Cells left for the lock icons. */
  locks: number;
}

const ID_WIDTH = 6;
const STATUS_WIDTH = 7;
const BAR_CELLS = 5;
const VOLTS_WIDTH = 6;
const AGE_WIDTH = 8;

/** Marker 2, then the columns after the token and the single spaces between them, two before the locks. */
const FIXED_CELLS = 2 + 1 + ID_WIDTH + 1 + STATUS_WIDTH + 1 + BAR_CELLS + 1 + VOLTS_WIDTH + 1 + AGE_WIDTH + 2;
/** Kept for the lock icons before the token column grows past 16 cells: what 80 columns leave them. */
const LOCK_CELLS = 80 - FIXED_CELLS - 16;

/**
 * Widths for a terminal `width` cells wide, given the longest token of the fleet. The token column
 * is as wide as the longest token, up to 16 cells, and beyond that as far as the width allows
 * once the locks have their room: long tokens sharing a prefix ("warehouse-north-0001" …) must
 * still tell the rows apart on a wide terminal.
 */
export function tableColumns(width: number, maxTokenLength: number): TableColumns {
  const room = Math.max(16, width - FIXED_CELLS - LOCK_CELLS);
  const token = Math.min(room, Math.max(5, maxTokenLength));
  return { token, locks: Math.max(0, width - FIXED_CELLS - token) };
}

export interface FleetTableProps {
  /** The stations in view, top to bottom; `undefined` for a token whose state is not known yet. */
  rows: readonly (SimStation | undefined)[];
  tokens: readonly string[];
  selectedRow: number;
  columns: TableColumns;
  /** Lines the table takes below its header; short lists are padded so the layout stays put. */
  height: number;
  icons: IconSet;
  now: number;
  /** Statuses are as last seen, not live: drawn dim, without their colours. */
  stale: boolean;
}

export function FleetTable({ rows, tokens, selectedRow, columns, height, icons, now, stale }: FleetTableProps) {
  const header =
    '  ' +
    fit('TOKEN', columns.token) +
    ' ' +
    fit('ID', ID_WIDTH, 'right') +
    ' ' +
    fit('STATUS', STATUS_WIDTH) +
    ' ' +
    fit('BATTERY', BAR_CELLS + 1 + VOLTS_WIDTH) +
    ' ' +
    fit('SEEN', AGE_WIDTH, 'right') +
    '  LOCKS';
  return (
    <Box flexDirection="column" height={height + 1} overflow="hidden">
      <Text bold dimColor wrap="truncate">
        {header}
      </Text>
      {rows.map((station, index) => (
        <FleetRow
          key={tokens[index]}
          token={tokens[index] ?? ''}
          station={station}
          selected={index === selectedRow}
          columns={columns}
          icons={icons}
          stale={stale}
          age={station ? formatAge(now - Date.parse(station.lastConnection)) : ''}
        />
      ))}
    </Box>
  );
}

interface FleetRowProps {
  token: string;
  station: SimStation | undefined;
  selected: boolean;
  columns: TableColumns;
  icons: IconSet;
  stale: boolean;
  /** Passed formatted, so a row redraws when its text changes and not on every clock tick. */
  age: string;
}

const FleetRow = memo(function FleetRow({ token, station, selected, columns, icons, stale, age }: FleetRowProps) {
  const marker = selected ? '› ' : '  ';
  // Cut in the middle: tokens sharing a long prefix ("warehouse-north-…") differ at the end.
  const tokenCell = fit(token, columns.token, 'middle');
  if (!station) {
    return (
      <Text wrap="truncate">
        {marker}
        <Text inverse={selected}>{tokenCell}</Text>
        <Text dimColor> …</Text>
      </Text>
    );
  }
  const gauge = batteryGauge(station.batteryVoltage, station.battery, icons, BAR_CELLS);
  const online = station.status === 'online';
  return (
    <Text wrap="truncate">
      {marker}
      <Text inverse={selected} bold={selected}>
        {tokenCell}
      </Text>{' '}
      {fit(String(station.stationId), ID_WIDTH, 'right')}{' '}
      {stale ? <Text dimColor>{fit(station.status, STATUS_WIDTH)}</Text> : <Text color={online ? 'green' : 'red'}>{fit(station.status, STATUS_WIDTH)}</Text>}{' '}
      <Text color={BATTERY_COLOURS[gauge.level]}>
        {gauge.bar} {fit(formatVolts(station.batteryVoltage), VOLTS_WIDTH, 'right')}
      </Text>{' '}
      <Text dimColor>{fit(age, AGE_WIDTH, 'right')}</Text>
      {'  '}
      <LockIcons station={station} icons={icons} cells={columns.locks} />
    </Text>
  );
});

/** One icon per lock, as many as fit in `cells`; the rest counted as `+N`. */
function LockIcons({ station, icons, cells }: { station: SimStation; icons: IconSet; cells: number }) {
  const per = icons.cellWidth + 1;
  const locks = station.locks;
  let shown = Math.floor((cells + 1) / per);
  if (shown < locks.length) shown = Math.max(0, Math.floor((cells + 1 - 4) / per));
  return (
    <>
      {locks.slice(0, shown).map((lock, index) => {
        const look = lockLook(lock);
        return (
          <Text key={lock.lockId} color={LOCK_COLOURS[look]}>
            {index > 0 ? ' ' : ''}
            {icons[look]}
          </Text>
        );
      })}
      {shown < locks.length ? <Text dimColor> +{locks.length - shown}</Text> : null}
    </>
  );
}
