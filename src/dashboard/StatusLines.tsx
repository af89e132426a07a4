/** The lines around the fleet: counts and account, addresses, connection progress or stream state, key hints. */
import { Text } from './Text.js';
import type { StreamState } from '../client/control-client.js';
import type { HealthProgress } from './use-health-progress.js';
import { cellWidth, formatMs, sparkline, type IconSet } from './format.js';
import { addressPieces, type DashboardAddresses } from './addresses.js';

export interface HeaderProps {
  total: number;
  online: number;
  /** The counts are as last seen, not live (the event stream is down). */
  stale: boolean;
  /** Who `u` unlocks as (the chosen account), and how many there are to switch between with `a`. */
  account: string | undefined;
  accounts: number;
}

export function Header({ total, online, stale, account, accounts }: HeaderProps) {
  return (
    <Text wrap="truncate">
      <Text bold>station-sim</Text>
      <Text dimColor> · </Text>
      {stale ? (
        <Text dimColor>{`${total} stations, last seen: ${online} online, ${total - online} offline`}</Text>
      ) : (
        <>
          {total} stations: <Text color="green">{online} online</Text>, <Text color="red">{total - online} offline</Text>
        </>
      )}
      {account === undefined ? null : (
        <>
          <Text dimColor>{' · u as '}</Text>
          <Text color="cyan">{account}</Text>
          {accounts > 1 ? <Text dimColor>{' (a)'}</Text> : null}
        </>
      )}
    </Text>
  );
}

export interface AddressLineProps {
  addresses: DashboardAddresses;
  /** Start-up notices: counted here, read in full with `i`. */
  notices: number;
  width: number;
}

/** `MQTT mqtt://127.0.0.1:1883 (embedded) · API http://… · control …`: as many as fit, the broker first. */
export function AddressLine({ addresses, notices, width }: AddressLineProps) {
  const marker = notices > 0 ? ` · ${notices} notice${notices === 1 ? '' : 's'}: i` : '';
  const room = width - cellWidth(marker);
  const shown: string[] = [];
  let used = 0;
  for (const piece of addressPieces(addresses)) {
    const text = `${piece.label} ${piece.value}`;
    const cost = cellWidth(text) + (shown.length > 0 ? 3 : 0);
    // The first piece is shown however narrow (cut at the edge): it is the one the README's next step needs.
    if (shown.length > 0 && used + cost > room) break;
    shown.push(text);
    used += cost;
  }
  return (
    <Text wrap="truncate">
      <Text dimColor>{shown.join(' · ')}</Text>
      {marker ? <Text color="yellow">{marker}</Text> : null}
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
  /** The fleet's slowest unlock per slot of the last minutes (request → unlocked), oldest first. */
  latency?: readonly (number | undefined)[];
}

export function StatusLine({ health, stream, live, filter, matches, position, width, icons, realNow, latency }: StatusLineProps) {
  const right = `${filter ? `filter "${filter}" ` : ''}${position}/${matches}`;
  const known = latency?.filter((value): value is number => value !== undefined) ?? [];
  // Shown once there is something to show, and where it leaves the stream's state room.
  const spark = known.length > 0 && width >= 70 ? ` · unlocks 5m ${sparkline(latency!, latency!.length, icons.spark, { min: 0 })} max ${formatMs(Math.max(...known))}` : '';
  return (
    <Text wrap="truncate">
      <StreamOrProgress health={health} stream={stream} live={live} width={Math.max(10, width - right.length - spark.length - 3)} icons={icons} realNow={realNow} />
      {spark ? <Text color="cyan">{spark}</Text> : null}
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

export interface FooterProps {
  /** The station filter being typed. */
  draft: string | undefined;
  /** The log search being typed. */
  logDraft: string | undefined;
  width: number;
}

export function Footer({ draft, logDraft, width }: FooterProps) {
  if (draft !== undefined || logDraft !== undefined) {
    return (
      <Text wrap="truncate">
        <Text color="cyan">{draft !== undefined ? `/${draft}` : `log search: ${logDraft}`}</Text>
        <Text inverse> </Text>
        <Text dimColor> applies as you type · Enter keep · Esc clear</Text>
      </Text>
    );
  }
  return (
    <Text wrap="truncate">
      {hintsFor(width).map(([keys, what], index) => (
        <Text key={keys}>
          {index > 0 ? ' ' : ''}
          <Text color="cyan">{keys}</Text>
          <Text dimColor> {what}</Text>
        </Text>
      ))}
    </Text>
  );
}

/** The hints that fit in `width`, most wanted first, `? help` and `q quit` always. */
export function hintsFor(width: number): [string, string][] {
  const always = HINTS.slice(-2);
  const cost = (hints: readonly [string, string][]): number => hints.reduce((sum, [keys, what]) => sum + cellWidth(keys) + 1 + what.length + 1, -1);
  const shown: [string, string][] = [];
  for (const hint of HINTS.slice(0, -2)) if (cost([...shown, hint, ...always]) <= width) shown.push(hint);
  return [...shown, ...always];
}

/** Most wanted first; `?` has the long form of all of them. */
const HINTS: readonly [string, string][] = [
  ['↑↓', 'move'],
  ['←→', 'lock'],
  ['u', 'unlock'],
  ['f', 'faults'],
  ['a', 'account'],
  ['o', 'on/off'],
  ['b', 'batt'],
  ['x', 'jam'],
  ['r', 'reboot'],
  ['s', 'fleet'],
  ['i', 'info'],
  ['/', 'filter'],
  ['e', 'search log'],
  ['[]', 'scroll log'],
  ['?', 'help'],
  ['q', 'quit'],
];
