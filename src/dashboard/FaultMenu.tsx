/**
 * The fault menu (`f`), in the table's place: the station faults and the `/v1` faults a key adds
 * to the selected station and lock, and those in force, clearable. The station's faults also show
 * in the detail below; the `/v1` faults are the API's, listed here as the control plane has them.
 */
import { Box } from 'ink';
import { Text } from './Text.js';
import { API_FAULT_MENU, FAULT_MENU } from './dashboard-actions.js';
import { describeFault } from './StationDetail.js';
import type { SimStation } from '../client/sim-types.js';
import type { DashboardControl } from '../client/control-client.js';

/** A `/v1` fault in force, as `GET /sim/v1/api-faults` lists it. */
export type ApiFaultInForce = Awaited<ReturnType<DashboardControl['apiFaults']>>[number];

export interface FaultMenuProps {
  station: SimStation | undefined;
  lockId: string | undefined;
  scope: 'lock' | 'station';
  /** `undefined` while not known (being fetched, or the control plane refused). */
  apiFaults: readonly ApiFaultInForce[] | undefined;
  /** Lines it takes. */
  height: number;
  width: number;
}

export function FaultMenu({ station, lockId, scope, apiFaults, height, width }: FaultMenuProps) {
  if (!station) {
    return (
      <Box height={height} flexDirection="column">
        <Text dimColor>no station selected: no faults to add</Text>
      </Box>
    );
  }
  const target = scope === 'lock' && lockId !== undefined ? `${station.token} lock ${lockId}` : `${station.token} (every lock)`;
  const items = FAULT_MENU.map((item, index) => `${index + 1} ${item.kind.padEnd(14)} ${item.what}`);
  const rows = width >= TWO_COLUMNS_FROM ? twoColumns(items, width) : items;
  const api = API_FAULT_MENU.map((item) => `${item.key} ${item.what}`).join(' · ');
  const inForce = apiFaults === undefined ? '…' : apiFaults.length === 0 ? 'none' : apiFaults.map(describeApiFault).join(' · ');
  return (
    <Box height={height} flexDirection="column" overflow="hidden">
      <Text wrap="truncate">
        <Text bold>{`Faults on ${target}`}</Text>
        <Text dimColor>{` · l: ${scope === 'lock' ? 'whole station' : 'the lock'} · c: clear · Esc: close`}</Text>
      </Text>
      {rows.map((row) => (
        <Text key={row} wrap="truncate">
          <Text color="cyan">{row.slice(0, 1)}</Text>
          {row.slice(1)}
        </Text>
      ))}
      <Text wrap="truncate">
        <Text dimColor>{`/v1 unlocks of ${station.token}: `}</Text>
        {api}
        <Text dimColor> · 0 clear</Text>
      </Text>
      <Text wrap="truncate">
        <Text dimColor>in force: </Text>
        <Text color={station.faults.length > 0 ? 'yellow' : undefined}>{station.faults.length === 0 ? 'no station faults' : station.faults.map(describeFault).join(' · ')}</Text>
        <Text dimColor> · /v1: </Text>
        <Text color={apiFaults && apiFaults.length > 0 ? 'yellow' : undefined}>{inForce}</Text>
      </Text>
    </Box>
  );
}

/** From this width the station faults take two columns (three lines instead of six). */
export const TWO_COLUMNS_FROM = 100;
/** Spaces at least between the two columns. */
const COLUMN_GAP = 3;

/**
 * The items in two columns, the first half on the left: the left column as wide as its longest
 * item, or cut (with `…`) where that leaves the right column less than it needs, so the columns
 * never run together (`…the API times out4 ackNoOpen`), whatever the width.
 */
export function twoColumns(items: readonly string[], width: number): string[] {
  const half = Math.ceil(items.length / 2);
  const left = items.slice(0, half);
  const right = items.slice(half);
  const longest = (column: readonly string[]): number => Math.max(0, ...column.map((item) => item.length));
  const leftWidth = Math.min(longest(left), Math.max(Math.floor(width / 2) - COLUMN_GAP, width - longest(right) - COLUMN_GAP));
  const cut = (item: string): string => (item.length <= leftWidth ? item : `${item.slice(0, leftWidth - 1)}…`);
  return left.map((item, row) => (right[row] === undefined ? cut(item) : `${cut(item).padEnd(leftWidth + COLUMN_GAP)}${right[row]}`));
}

/** `503 on POST …/unlock for ST-1001 (a1)`, short: the route's last word. */
export function describeApiFault(fault: ApiFaultInForce): string {
  const what = fault.kind === 'status' ? String(fault.status) : fault.kind === 'latency' ? `+${fault.latencyMs}ms` : fault.kind;
  const route = fault.route === undefined ? 'every route' : fault.route.split('/').at(-1);
  return `${what} ${route}${fault.token === undefined ? '' : ` ${fault.token}`} (${fault.id})`;
}
