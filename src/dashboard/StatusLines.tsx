/** The lines around the fleet: title and counts, connection progress or stream state, key hints. */
import { Text } from 'ink';
import type { StreamState } from '../client/control-client.js';
import type { HealthProgress } from './use-health-progress.js';
import type { IconSet } from './format.js';

export interface HeaderProps {
  title: string;
  total: number;
  online: number;
  /** The counts are as last seen, not live (the event stream is down). */
  stale: boolean;
}

export function Header({ title, total, online, stale }: HeaderProps) {
  return (
    <Text wrap="truncate">
      <Text bold>station-sim</Text>
      <Text dimColor> {title} · </Text>
      {stale ? (
        <Text dimColor>{`${total} stations, last seen: ${online} online, ${total - online} offline`}</Text>
      ) : (
        <>
          {total} stations: <Text color="green">{online} online</Text>, <Text color="red">{total - online} offline</Text>
        </>
      )}
    </Text>
  );
}

export interface StatusLineProps {
  health: HealthProgress | undefined;
  stream: StreamState;
  /** The stream is open and its snapshot has come over this connection. */
  live: boolean;
  /** Applied filter, if any, with how many stations match. */
  filter: string;
  matches: number;
  /** 1-based position of the selection in the list, 0 when empty. */
  position: number;
  width: number;
  icons: IconSet;
  /** The dashboard's own time, on the clock of the stream's reconnect timer: for its countdown. */
  realNow: number;
}

export function StatusLine({ health, stream, live, filter, matches, position, width, icons, realNow }: StatusLineProps) {
  const right = `${filter ? `filter "${filter}" ` : ''}${position}/${matches}`;
  return (
    <Text wrap="truncate">
      <StreamOrProgress health={health} stream={stream} live={live} width={Math.max(10, width - right.length - 3)} icons={icons} realNow={realNow} />
      <Text dimColor> · </Text>
      <Text color={filter ? 'cyan' : undefined}>{right}</Text>
    </Text>
  );
}

function StreamOrProgress({ health, stream, live, width, icons, realNow }: Pick<StatusLineProps, 'health' | 'stream' | 'live' | 'icons' | 'realNow'> & { width: number }) {
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
      return live ? <Text color="green">events live</Text> : <Text color="yellow">events: waiting for snapshot…</Text>;
    case 'connecting':
      return <Text color="yellow">events: connecting…</Text>;
    case 'waiting': {
      // Counted down on each tick (once a second), so whole seconds, rounded up.
      const left = Math.ceil(Math.max(0, stream.retryAt - realNow) / 1000);
      return <Text color="yellow">{`events: ${left > 0 ? `reconnecting in ${left}s` : 'reconnecting…'} (${stream.reason})`}</Text>;
    }
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
