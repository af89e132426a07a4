/** The live event log, newest line at the bottom; an unlock is one line that grows. */
import { memo } from 'react';
import { Box, Text } from 'ink';
import { describeEntry, type LogEntry, type LogTone } from './activity-log.js';
import { formatClock } from './format.js';

const TONE_COLOURS: Record<LogTone, string | undefined> = { info: undefined, ok: 'green', warn: 'yellow', error: 'red' };

export interface EventLogProps {
  /** The last entries, oldest first; at most `height` of them are drawn. */
  entries: readonly LogEntry[];
  height: number;
  showClock: boolean;
}

export function EventLog({ entries, height, showClock }: EventLogProps) {
  const visible = entries.slice(-height);
  return (
    // Newest at the bottom, as in `tail -f`: a short log sits just above the footer.
    <Box flexDirection="column" justifyContent="flex-end" height={height} overflow="hidden">
      {visible.map((entry) => (
        <LogRow key={entry.id} entry={entry} showClock={showClock} />
      ))}
    </Box>
  );
}

// Entries are replaced, never mutated, when they change, so comparing by reference is enough.
const LogRow = memo(function LogRow({ entry, showClock }: { entry: LogEntry; showClock: boolean }) {
  const { text, tone } = describeEntry(entry);
  return (
    <Text wrap="truncate">
      {showClock ? <Text dimColor>{formatClock(entry.at)} </Text> : null}
      <Text color={TONE_COLOURS[tone]}>{text}</Text>
    </Text>
  );
});
