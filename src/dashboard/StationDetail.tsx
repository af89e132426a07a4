/** The selected station in full: battery model, every lock with its pending timer, faults. */
import { Box } from 'ink';
import { Text } from './Text.js';
import { DETAIL_LINES } from './layout.js';
import {
  BATTERY_COLOURS,
  LOCK_COLOURS,
  batteryGauge,
  formatAge,
  formatDue,
  formatVolts,
  lockLook,
  sparkline,
  type IconSet,
} from './format.js';
import type { VoltageSample } from './fleet-store.js';
import type { Fault, SimStation } from '../client/sim-types.js';

export interface StationDetailProps {
  station: SimStation | undefined;
  /** Index of the selected lock in `station.locks`. */
  lockIndex: number;
  icons: IconSet;
  now: number;
  /** The station is as last seen, not live. */
  stale?: boolean;
  /** Battery readings of the station, oldest first, for its sparkline. @default none */
  battery?: readonly VoltageSample[];
  /** The voltage `b` charges back to, the top of the sparkline. */
  fixtureVoltage?: number;
  /**
   * Who `u` unlocks this station as: the chosen account, or another where the chosen one cannot
   * reach it (said so), or none that can.
   */
  unlockAs?: { account: string | undefined; chosen: string | undefined; chosenCannot: boolean };
  /** Cells per line. @default 80 */
  width?: number;
}

/** Cells of the battery sparkline. */
const SPARK_CELLS = 16;

export function StationDetail({ station, lockIndex, icons, now, stale = false, battery = [], fixtureVoltage, unlockAs, width = 80 }: StationDetailProps) {
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
  const volts = battery.map((sample) => sample.volts);
  const spark = sparkline(volts, SPARK_CELLS, icons.spark, { min: Math.min(cutoffV - 0.5, ...volts), max: Math.max(fixtureVoltage ?? 0, ...volts) });
  const rates = `−${drainPerUnlockV}V/unlock −${drainPerHourV}V/h`;
  return (
    <Box height={DETAIL_LINES} flexDirection="column" overflow="hidden">
      <Text wrap="truncate">
        <Text bold>{station.token}</Text> #{station.stationId}{' '}
        {stale ? <Text dimColor>{`${station.status} (last seen)`}</Text> : <Text color={station.status === 'online' ? 'green' : 'red'}>{station.status}</Text>}
        <Text dimColor>
          {` · seen ${formatAge(now - Date.parse(station.lastConnection))}`}
          {heartbeat ? ` · heartbeat ${formatDue(Date.parse(heartbeat.dueAt) - now)}` : ''}
        </Text>
        {station.link ? <Text color={station.link === 'perfect' ? undefined : 'yellow'}>{` · link ${station.link}`}</Text> : null}
      </Text>
      <Text wrap="truncate">
        <Text dimColor>battery </Text>
        <Text color={BATTERY_COLOURS[gauge.level]}>{formatVolts(station.batteryVoltage)}</Text>{' '}
        <Text color="cyan">{spark}</Text>
        <Text dimColor>{` cutoff ${formatVolts(cutoffV)}${width >= 72 ? ` · ${rates}` : ''}`}</Text>
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
        {unlockAs ? <UnlockAs {...unlockAs} token={station.token} /> : null}
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
        {station.faults.length === 0 ? <Text dimColor>none (f: add)</Text> : <Text color="yellow">{station.faults.map(describeFault).join(' · ')}</Text>}
      </Text>
    </Box>
  );
}

/** ` · u as bob@example.com (alice@example.com cannot reach it)`, said as a fact of the fixture. */
function UnlockAs({ account, chosen, chosenCannot, token }: NonNullable<StationDetailProps['unlockAs']> & { token: string }) {
  if (account === undefined && chosen === undefined) return null;
  if (account === undefined) return <Text color="yellow">{` · no account can reach ${token}`}</Text>;
  return (
    <>
      <Text dimColor>{' · u as '}</Text>
      <Text color="cyan">{account}</Text>
      {chosenCannot && chosen !== undefined ? <Text dimColor>{` (${chosen} cannot reach it)`}</Text> : null}
    </>
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
