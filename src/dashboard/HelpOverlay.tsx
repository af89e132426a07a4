/**
 * The key reference, shown over the fleet by `?`. In a terminal too short for the framed list it
 * drops the frame and uses shorter words, and where even that does not fit it shows a window of
 * the lines with what is above and below, scrolled with the arrow keys or j/k: every line is drawn
 * whole or not at all, never squeezed over its neighbour.
 */
import { Box } from 'ink';
import { Text } from './Text.js';
import type { IconSet } from './format.js';

/** Keys and what they do, for a framed list at least 80 columns wide. */
export const HELP_KEYS: readonly [string, string][] = [
  ['↑ ↓  j k', 'select a station (PgUp PgDn, Home End, g G jump)'],
  ['← →  Tab', 'select a lock of the station'],
  ['u', 'unlock the selected lock through /v1, as the account shown'],
  ['a', "switch the account u unlocks as (the fixture's accounts)"],
  ['f', 'fault menu: 1-6 station, 7-9 /v1, c clear, l lock/station'],
  ['o', 'take the station offline / bring it back online'],
  ['b', "drain below the cutoff / charge to the fixture's voltage"],
  ['x', 'jam / unjam the selected lock'],
  ['r  l', 'reboot the station / next link profile (lte-m, nb-iot, …)'],
  ['s', 'the fleet in numbers: counts, faults, slowest unlocks'],
  ['i', 'addresses (API, control, MQTT), accounts, start-up notices'],
  ['/', 'filter stations by token as you type; Enter keeps, Esc clears'],
  ['e', 'search the event log as you type; Enter keeps, Esc clears'],
  ['[  ]', 'scroll the event log back / forward'],
  ['?  Esc', 'close this help (Esc also closes a panel, then the search)'],
  ['q  Ctrl-C', 'quit'],
];

/** The same in at most 40 columns, for a short terminal (which is often a narrow one too). */
export const COMPACT_HELP_KEYS: readonly [string, string][] = [
  ['↑↓ j k', 'station (PgUp PgDn g G)'],
  ['←→ Tab', 'lock of the station'],
  ['u', 'unlock through /v1'],
  ['a', 'account u unlocks as'],
  ['f', 'fault menu'],
  ['o', 'offline / back online'],
  ['b', 'drain / charge battery'],
  ['x', 'jam / unjam the lock'],
  ['r l', 'reboot / next link'],
  ['s', 'fleet in numbers'],
  ['i', 'addresses, notices'],
  ['/', 'filter stations'],
  ['e', 'search the log'],
  ['[ ]', 'scroll the log'],
  ['? Esc', 'close this help'],
  ['q Ctrl-C', 'quit'],
];

/** Frame, the keys and the lock legend: 19 lines, what 80×24 leaves it. */
const FULL_HEIGHT = 2 + HELP_KEYS.length + 1;
/** The compact keys and the legend. */
const COMPACT_LINES = COMPACT_HELP_KEYS.length + 1;

/** How far the help can be scrolled in `height` lines: 0 where it fits. */
export function helpScrollMax(height: number): number {
  if (height >= FULL_HEIGHT || height >= COMPACT_LINES) return 0;
  // One line goes to saying what is above and below.
  return COMPACT_LINES - Math.max(1, height - 1);
}

export interface HelpOverlayProps {
  /** Lines it covers. */
  height: number;
  icons: IconSet;
  /** First line shown where the help has to scroll; clamped. @default 0 */
  top?: number;
}

export function HelpOverlay({ height, icons, top = 0 }: HelpOverlayProps) {
  const legend = (
    <Text key="legend" wrap="truncate" dimColor>
      {`locks: ${icons.locked.trim()} locked  ${icons.unlocked.trim()} unlocked  ${icons.jammed.trim()} jammed  ${icons.opening.trim()} opening`}
    </Text>
  );
  if (height >= FULL_HEIGHT) {
    return (
      <Box flexDirection="column" height={height} borderStyle="round" paddingX={1} overflow="hidden">
        {HELP_KEYS.map(([keys, what]) => (
          <KeyLine key={keys} keys={keys} what={what} pad={11} />
        ))}
        {legend}
      </Box>
    );
  }
  const lines = [...COMPACT_HELP_KEYS.map(([keys, what]) => <KeyLine key={keys} keys={keys} what={what} pad={9} />), legend];
  const max = helpScrollMax(height);
  const first = Math.max(0, Math.min(top, max));
  const shown = max === 0 ? lines : lines.slice(first, first + Math.max(1, height - 1));
  const below = lines.length - first - shown.length;
  return (
    <Box flexDirection="column" height={height} overflow="hidden">
      {height > COMPACT_LINES ? <Text bold>Keys</Text> : null}
      {shown.map((line) => (
        <Box key={line.key} flexShrink={0}>
          {line}
        </Box>
      ))}
      {max === 0 ? null : (
        <Text wrap="truncate" color="cyan">
          {[first > 0 ? `↑ ${first} above` : '', below > 0 ? `↓ ${below} more` : '', '↑↓ j k scroll'].filter(Boolean).join(' · ')}
        </Text>
      )}
    </Box>
  );
}

function KeyLine({ keys, what, pad }: { keys: string; what: string; pad: number }) {
  return (
    <Box flexShrink={0}>
      <Text wrap="truncate">
        <Text color="cyan">{keys.padEnd(pad)}</Text>
        {what}
      </Text>
    </Box>
  );
}
