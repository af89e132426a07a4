/** The live event log, newest line at the bottom; an unlock is one entry that grows, wrapped at its steps when narrow. */
import { memo } from 'react';
import { Box } from 'ink';
import { Text } from './Text.js';
import type { LogEntry, LogTone } from './activity-log.js';
import { logLines, type LogScreenLine } from './log-lines.js';

const TONE_COLOURS: Record<LogTone, string | undefined> = { info: undefined, ok: 'green', warn: 'yellow', error: 'red' };

export interface EventLogProps {
  /** The last entries, oldest first; as many as fit in `height` lines are drawn. */
  entries: readonly LogEntry[];
  /** Cells per line. */
  width: number;
  height: number;
  showClock: boolean;
}

export function EventLog({ entries, width, height, showClock }: EventLogProps) {
  const lines = logLines(entries, { width, height, showClock });
  return (
    // Newest at the bottom, as in `tail -f`: a short log sits just above the footer.
    <Box flexDirection="column" justifyContent="flex-end" height={height} overflow="hidden">
      {lines.map((line) => (
        <LogRow key={line.key} line={line} />
      ))}
    </Box>
  );
}

const LogRow = memo(
  function LogRow({ line }: { line: LogScreenLine }) {
    return (
      <Text wrap="truncate">
        {line.clock ? <Text dimColor>{line.clock}</Text> : null}
        <Text color={TONE_COLOURS[line.tone]}>{line.text}</Text>
      </Text>
    );
  },
  (before, after) => before.line.text === after.line.text && before.line.clock === after.line.clock && before.line.tone === after.line.tone,
);
