/** The lines around the fleet: title and counts, connection progress or stream state, key hints. */
import { Text } from 'ink';
import type { StreamState } from './control-connection.js';
import type { HealthProgress } from './use-health-progress.js';
import type { IconSet } from './format.js';

export function Header({ title, total, online }: { title: string; total: number; online: number }) {
  return (
    <Text wrap="truncate">
      <Text bold>station-sim</Text>
      <Text dimColor> {title} · </Text>
      {total} stations: <Text color="green">{online} online</Text>, <Text color="red">{total - online} offline</Text>
    </Text>
  );
}

export interface StatusLineProps {
  health: HealthProgress | undefined;
  stream: StreamState;
  hasSnapshot: boolean;
  /** Applied filter, if any, with how many stations match. */
  filter: string;
  matches: number;
  /** 1-based position of the selection in the list, 0 when empty. */
  position: number;
  width: number;
  icons: IconSet;
}

export function StatusLine({ health, stream, hasSnapshot, filter, matches, position, width, icons }: StatusLineProps) {
  const right = `${filter ? `filter "${filter}" ` : ''}${position}/${matches}`;
  return (
    <Text wrap="truncate">
      <StreamOrProgress health={health} stream={stream} hasSnapshot={hasSnapshot} width={Math.max(10, width - right.length - 3)} icons={icons} />
      <Text dimColor> · </Text>
      <Text color={filter ? 'cyan' : undefined}>{right}</Text>
    </Text>
  );
}

function StreamOrProgress({ health, stream, hasSnapshot, width, icons }: Pick<StatusLineProps, 'health' | 'stream' | 'hasSnapshot' | 'icons'> & { width: number }) {
  // Never reached yet: there is no fleet to show a bar of, only why.
  if (health?.error && !health.ready && health.total === 0) return <Text color="red">{health.error}</Text>;
  if (health && !health.ready) {
    // While the fleet connects: a bar of how many stations have come up, from /sim/v1/health.
    const counts = `${health.settled}/${health.total}`;
    const cells = Math.max(5, Math.min(30, width - counts.length - 20));
    const filled = health.total > 0 ? Math.round((health.settled / health.total) * cells) : 0;
    return (
      <Text>
        connecting fleet{' '}
        <Text color="cyan">
          {icons.barFull.repeat(filled)}
          {icons.barEmpty.repeat(cells - filled)}
        </Text>{' '}
        {counts}
        {health.error ? <Text color="red"> {health.error}</Text> : null}
      </Text>
    );
  }
  switch (stream.phase) {
    case 'open':
      return hasSnapshot ? <Text color="green">events live</Text> : <Text color="yellow">events: waiting for snapshot…</Text>;
    case 'connecting':
      return <Text color="yellow">events: connecting…</Text>;
    case 'waiting':
      return <Text color="yellow">{`events: reconnecting in ${(stream.retryInMs / 1000).toFixed(1)}s (${stream.reason})`}</Text>;
    case 'refused':
      return <Text color="red">{`events refused: ${stream.reason}`}</Text>;
    case 'closed':
      return <Text dimColor>events closed</Text>;
  }
}

export function Footer({ draft }: { draft: string | undefined }) {
  if (draft !== undefined) {
    return (
      <Text wrap="truncate">
        <Text color="cyan">/{draft}</Text>
        <Text inverse> </Text>
        <Text dimColor> Enter apply · Esc clear</Text>
      </Text>
    );
  }
  return (
    <Text wrap="truncate">
      {HINTS.map(([keys, what], index) => (
        <Text key={keys}>
          {index > 0 ? ' ' : ''}
          <Text color="cyan">{keys}</Text>
          <Text dimColor> {what}</Text>
        </Text>
      ))}
    </Text>
  );
}

/** Short enough for 80 columns; `?` has the long form. */
const HINTS: readonly [string, string][] = [
  ['↑↓', 'move'],
  ['←→', 'lock'],
  ['u', 'unlock'],
  ['o', 'on/off'],
  ['b', 'batt'],
  ['x', 'jam'],
  ['r', 'reboot'],
  ['/', 'filter'],
  ['?', 'help'],
  ['q', 'quit'],
];
