/** The selected station in full: battery model, every lock with its pending timer, faults. */
import { Box, Text } from 'ink';
import { DETAIL_LINES } from './layout.js';
import {
  BATTERY_COLOURS,
  LOCK_COLOURS,
  batteryGauge,
  formatAge,
  formatDue,
  formatVolts,
  lockLook,
  type IconSet,
} from './format.js';
import type { Fault, SimStation } from '../client/sim-types.js';

export interface StationDetailProps {
  station: SimStation | undefined;
  /** Index of the selected lock in `station.locks`. */
  lockIndex: number;
  icons: IconSet;
  now: number;
  /** The station is as last seen, not live. */
  stale?: boolean;
}

export function StationDetail({ station, lockIndex, icons, now, stale = false }: StationDetailProps) {
  if (!station) {
    return (
      <Box height={DETAIL_LINES} flexDirection="column">
        <Text dimColor>no station selected</Text>
      </Box>
    );
  }
  const gauge = batteryGauge(station.batteryVoltage, station.battery, icons);
  const { cutoffV, drainPerUnlockV, drainPerHourV } = station.battery;
  const lock = station.locks[lockIndex];
  const heartbeat = station.timers.find((timer) => timer.kind === 'heartbeat');
  return (
    <Box height={DETAIL_LINES} flexDirection="column" overflow="hidden">
      <Text wrap="truncate">
        <Text bold>{station.token}</Text> #{station.stationId}{' '}
        {stale ? <Text dimColor>{`${station.status} (last seen)`}</Text> : <Text color={station.status === 'online' ? 'green' : 'red'}>{station.status}</Text>}
        {' · '}
        <Text color={BATTERY_COLOURS[gauge.level]}>{formatVolts(station.batteryVoltage)}</Text>
        <Text dimColor>
          {` cutoff ${formatVolts(cutoffV)} −${drainPerUnlockV}V/unlock −${drainPerHourV}V/h · seen ${formatAge(now - Date.parse(station.lastConnection))}`}
          {heartbeat ? ` · heartbeat ${formatDue(Date.parse(heartbeat.dueAt) - now)}` : ''}
        </Text>
      </Text>
      <Text wrap="truncate">
        <Text dimColor>locks </Text>
        {station.locks.length === 0 ? <Text dimColor>none</Text> : null}
        {station.locks.map((each, index) => {
          const look = lockLook(each);
          return (
            <Text key={each.lockId}>
              {index > 0 ? ' ' : ''}
              <Text inverse={index === lockIndex} color={LOCK_COLOURS[look]}>
                {`${each.lockId}:${icons[look].trimEnd()}`}
              </Text>
            </Text>
          );
        })}
      </Text>
      <Text wrap="truncate">
        {lock ? (
          <>
            <Text dimColor>lock </Text>
            <Text bold>{lock.lockId}</Text> <Text color={LOCK_COLOURS[lockLook(lock)]}>{lock.status}</Text>
            {pendingText(station, lock.lockId, lock.pending, now)}
            <Text dimColor>{` · updated ${formatAge(now - Date.parse(lock.lastUpdated))}`}</Text>
          </>
        ) : (
          <Text dimColor>no lock</Text>
        )}
      </Text>
      <Text wrap="truncate">
        <Text dimColor>faults </Text>
        {station.faults.length === 0 ? <Text dimColor>none</Text> : <Text color="yellow">{station.faults.map(describeFault).join(' · ')}</Text>}
      </Text>
    </Box>
  );
}

/** ` · opening, unlocks in 0.4s` or ` · open, relocks in 4.1s`; empty when idle. */
function pendingText(station: SimStation, lockId: string, pending: SimStation['locks'][number]['pending'], now: number): string {
  if (pending === null) return '';
  const kind = pending === 'opening' ? 'unlock' : 'relock';
  const timer = station.timers.find((each) => each.lockId === lockId && each.kind === kind);
  const due = timer ? `, ${kind}s ${formatDue(Date.parse(timer.dueAt) - now)}` : '';
  return ` · ${pending}${due}`;
}

/** `dropCommands ×2 lock 1 (f1)`, `latency 200ms (f2)`, `reject low_battery p=0.5 (f3)`. */
export function describeFault(fault: Fault): string {
  const parts: string[] = [fault.kind];
  if (fault.delayMs !== undefined) parts.push(`${fault.delayMs}ms`);
  if (fault.reason !== undefined) parts.push(fault.reason);
  if (fault.count !== undefined) parts.push(`×${fault.count}`);
  if (fault.probability !== undefined) parts.push(`p=${fault.probability}`);
  if (fault.lockId !== undefined) parts.push(`lock ${fault.lockId}`);
  parts.push(`(${fault.id})`);
  return parts.join(' ');
}
