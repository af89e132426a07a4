/**
 * The fleet in numbers (`s`), in the table's place: what reads at 10,000 stations where a table of
 * rows does not. Counts by station status, lock state and battery, the stations with faults, the
 * unlock latency of the last minutes and the slowest unlocks.
 */
import { Box } from 'ink';
import { Text } from './Text.js';
import type { FleetOverview as Overview } from './fleet-store.js';
import { formatClock, formatMs, sparkline, type IconSet } from './format.js';
import type { LatencySummary } from './unlock-latency.js';

export interface FleetOverviewProps {
  overview: Overview;
  latency: LatencySummary;
  /** The slowest unlock per slot of the window, for the sparkline. */
  slots: readonly (number | undefined)[];
  icons: IconSet;
  height: number;
  width: number;
}

export function FleetOverview({ overview, latency, slots, icons, height, width }: FleetOverviewProps) {
  const { locks, faulted } = overview;
  const faultList = faulted.length === 0 ? 'none' : `${faulted.length}: ${faulted.slice(0, 20).join(' ')}${faulted.length > 20 ? ' …' : ''}`;
  const figures = latency.count === 0 ? 'none yet' : `${latency.count} · median ${formatMs(latency.median!)} · p95 ${formatMs(latency.p95!)}`;
  // Whatever lines are left below the figures list the slowest unlocks, one a line.
  const slowestRows = Math.max(0, height - 6);
  return (
    <Box height={height} flexDirection="column" overflow="hidden">
      <Text wrap="truncate">
        <Text bold>{`Fleet: ${overview.total} stations`}</Text>
        {' · '}
        <Text color="green">{`${overview.online} online`}</Text>
        {' · '}
        <Text color="red">{`${overview.offline} offline`}</Text>
        {' · '}
        <Text color={overview.lowBattery > 0 ? 'yellow' : undefined}>{`${overview.lowBattery} at or below battery cutoff`}</Text>
      </Text>
      <Text wrap="truncate">
        <Text dimColor>locks </Text>
        {`${locks.locked} locked · ${locks.unlocked} unlocked · `}
        <Text color={locks.jammed > 0 ? 'red' : undefined}>{`${locks.jammed} jammed`}</Text>
        {` · ${locks.opening} opening`}
      </Text>
      <Text wrap="truncate">
        <Text dimColor>stations with faults </Text>
        <Text color={faulted.length > 0 ? 'yellow' : undefined}>{faultList}</Text>
      </Text>
      <Text wrap="truncate">
        <Text dimColor>unlocks, last 5 min </Text>
        {figures}{' '}
        <Text color="cyan">{sparkline(slots, Math.min(slots.length, Math.max(0, width - 60)), icons.spark, { min: 0 })}</Text>
      </Text>
      <Text wrap="truncate" dimColor>
        {latency.slowest.length === 0 ? 'slowest unlocks: none yet' : 'slowest unlocks (request → unlocked):'}
      </Text>
      {latency.slowest.slice(0, slowestRows).map((each) => (
        <Text key={`${each.at}:${each.token}:${each.lockId}`} wrap="truncate">
          {`  ${formatMs(each.ms).padStart(6)}  ${each.token}/${each.lockId}  at ${formatClock(each.at)}`}
        </Text>
      ))}
    </Box>
  );
}
