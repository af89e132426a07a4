/** The key reference, shown over the fleet by `?`. */
import { Box, Text } from 'ink';
import type { IconSet } from './format.js';

const KEYS: readonly [string, string][] = [
  ['↑ ↓  j k', 'select a station (PgUp PgDn, Home End, g G jump)'],
  ['← →  Tab', 'select a lock of the station'],
  ['u', 'unlock the selected lock through the /v1 API'],
  ['o', 'take the station offline / bring it back online'],
  ['b', 'drain the battery below its cutoff / charge it to full'],
  ['x', 'jam / unjam the selected lock'],
  ['r', 'reboot the station'],
  ['/', 'filter by token: type, Enter to apply, Esc to clear'],
  ['?  Esc', 'close this help'],
  ['q  Ctrl-C', 'quit'],
];

export function HelpOverlay({ height, icons }: { height: number; icons: IconSet }) {
  return (
    <Box flexDirection="column" height={height} borderStyle="round" paddingX={1} overflow="hidden">
      <Text bold>Keys</Text>
      {KEYS.map(([keys, what]) => (
        <Text key={keys} wrap="truncate">
          <Text color="cyan">{keys.padEnd(11)}</Text>
          {what}
        </Text>
      ))}
      <Text wrap="truncate" dimColor>
        {`locks: ${icons.locked.trim()} locked  ${icons.unlocked.trim()} unlocked  ${icons.jammed.trim()} jammed  ${icons.opening.trim()} opening`}
      </Text>
    </Box>
  );
}
