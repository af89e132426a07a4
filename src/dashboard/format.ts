/** How values read on the dashboard: battery gauges, ages, timers, lock icons. Pure functions. */
import type { BatteryModel, SimLock } from '../client/sim-types.js';

/**
 * Symbols the screen uses. Every lock icon takes `cellWidth` terminal cells once padded, so the
 * table's columns stay aligned whatever the icons' own widths (🔒 is two cells, ⚠ one).
 */
export interface IconSet {
  locked: string;
  unlocked: string;
  jammed: string;
  opening: string;
  barFull: string;
  barEmpty: string;
  /** Sparkline levels, lowest first, one cell each. */
  spark: string;
  cellWidth: number;
}

export const EMOJI_ICONS: IconSet = { locked: '🔒', unlocked: '🔓', jammed: '⚠ ', opening: '… ', barFull: '█', barEmpty: '░', spark: '▁▂▃▄▅▆▇█', cellWidth: 2 };

/** For terminals without emoji (the Linux console, a non-UTF-8 locale): one ASCII cell each. */
export const ASCII_ICONS: IconSet = { locked: 'L', unlocked: 'U', jammed: '!', opening: '~', barFull: '#', barEmpty: '.', spark: '_.-=*#', cellWidth: 1 };

export type IconStyle = 'emoji' | 'ascii';

/**
 * Emoji unless the environment says the terminal cannot show them: `TERM=linux` or `dumb`, or a
 * locale that is set and is not UTF-8. An unset locale is common in containers that do show emoji.
 */
export function detectIconStyle(env: Readonly<Record<string, string | undefined>>): IconStyle {
  if (env['TERM'] === 'linux' || env['TERM'] === 'dumb') return 'ascii';
  const locale = env['LC_ALL'] || env['LC_CTYPE'] || env['LANG'];
  if (locale && !/utf-?8/i.test(locale)) return 'ascii';
  return 'emoji';
}

export function iconSet(style: IconStyle): IconSet {
  return style === 'ascii' ? ASCII_ICONS : EMOJI_ICONS;
}

export type LockLook = 'locked' | 'unlocked' | 'jammed' | 'opening';

/** What a lock looks like: jammed wins, then the unlock delay running, then its status. */
export function lockLook(lock: SimLock): LockLook {
  if (lock.status === 'jammed') return 'jammed';
  if (lock.pending === 'opening') return 'opening';
  return lock.status === 'unlocked' ? 'unlocked' : 'locked';
}

export const LOCK_COLOURS: Record<LockLook, string> = { locked: 'green', unlocked: 'yellow', jammed: 'red', opening: 'cyan' };

/** The voltage `b` charges a battery to; a full 12 V lead-acid battery at rest. */
export const FULL_VOLTAGE = 12.6;

export type BatteryLevel = 'good' | 'low' | 'empty';

export const BATTERY_COLOURS: Record<BatteryLevel, string> = { good: 'green', low: 'yellow', empty: 'red' };

/**
 * A gauge such as `███░░`, full at `FULL_VOLTAGE` and empty at the cutoff, below which the station
 * refuses unlocks (`low_battery`). Low is the last third before the cutoff.
 */
export function batteryGauge(voltage: number, battery: BatteryModel, icons: IconSet, cells = 5): { bar: string; level: BatteryLevel } {
  const span = Math.max(0.01, FULL_VOLTAGE - battery.cutoffV);
  const fraction = Math.min(1, Math.max(0, (voltage - battery.cutoffV) / span));
  const filled = Math.round(fraction * cells);
  const bar = icons.barFull.repeat(filled) + icons.barEmpty.repeat(cells - filled);
  const level: BatteryLevel = voltage < battery.cutoffV ? 'empty' : fraction < 1 / 3 ? 'low' : 'good';
  return { bar, level };
}

export function formatVolts(voltage: number): string {
  return `${voltage.toFixed(2)}V`;
}

/** `3s ago`, `5m ago`, `2h ago`, `4d ago`; `-` for a time that cannot be read. */
export function formatAge(sinceMs: number): string {
  if (!Number.isFinite(sinceMs)) return '-';
  const seconds = Math.max(0, Math.floor(sinceMs / 1000));
  if (seconds < 60) return `${seconds}s ago`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m ago`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)}h ago`;
  return `${Math.floor(seconds / 86_400)}d ago`;
}

/** Time left on a timer: `in 3.2s` under ten seconds, then `in 25s`, `in 4m`; `due` once passed. */
export function formatDue(leftMs: number): string {
  if (!Number.isFinite(leftMs)) return '-';
  if (leftMs <= 0) return 'due';
  if (leftMs < 10_000) return `in ${(leftMs / 1000).toFixed(1)}s`;
  if (leftMs < 120_000) return `in ${Math.round(leftMs / 1000)}s`;
  return `in ${Math.round(leftMs / 60_000)}m`;
}

/** `HH:MM:SS` in UTC, like every time the simulator reports. */
export function formatClock(epochMs: number): string {
  return new Date(epochMs).toISOString().slice(11, 19);
}

/**
 * Pads or cuts a plain string to exactly `width` characters. `middle` cuts out of the middle
 * (`warehous…te-0001`), for names that share a long prefix and differ at the end, such as tokens.
 */
export function fit(text: string, width: number, align: 'left' | 'right' | 'middle' = 'left'): string {
  if (width <= 0) return '';
  if (text.length > width) {
    if (width === 1) return '…';
    if (align !== 'middle') return `${text.slice(0, width - 1)}…`;
    const head = Math.ceil((width - 1) / 2);
    return `${text.slice(0, head)}…${text.slice(text.length - (width - 1 - head))}`;
  }
  return align === 'right' ? text.padStart(width) : text.padEnd(width);
}

// Emoji and East Asian wide characters take two terminal cells. ⚠ is pictographic but drawn in one
// cell unless followed by VS16, which the dashboard never writes.
const WIDE = /[\u1100-\u115F\u2E80-\u303E\u3041-\u33FF\u3400-\u4DBF\u4E00-\u9FFF\uA000-\uA4CF\uAC00-\uD7A3\uF900-\uFAFF\uFE30-\uFE4F\uFF00-\uFF60\uFFE0-\uFFE6]|(?!\u26A0)\p{Extended_Pictographic}/u;

/** Terminal cells `text` takes: one per character, two for emoji and East Asian wide characters. */
export function cellWidth(text: string): number {
  let width = 0;
  for (const char of text) width += WIDE.test(char) ? 2 : 1;
  return width;
}

/** `text` cut to at most `width` cells, ending in `…` when cut. */
export function cutToWidth(text: string, width: number): string {
  if (cellWidth(text) <= width) return text;
  if (width <= 0) return '';
  let cut = '';
  let used = 0;
  for (const char of text) {
    const cells = WIDE.test(char) ? 2 : 1;
    if (used + cells > width - 1) break;
    cut += char;
    used += cells;
  }
  return `${cut}…`;
}

/**
 * A sparkline of `values` (oldest first) in one cell per value, the last `width` of them: the
 * lowest level at `min`, the highest at `max` (by default the values' own range; a flat series sits
 * in the middle). `undefined` values (no reading in that slot) are blanks. Hand-written rather than
 * `sparkly`: the dashboard needs the ASCII levels of the Linux console and a fixed range.
 */
export function sparkline(values: readonly (number | undefined)[], width: number, levels: string, range: { min?: number; max?: number } = {}): string {
  const shown = values.slice(-Math.max(0, width));
  const known = shown.filter((value): value is number => value !== undefined && Number.isFinite(value));
  if (known.length === 0) return ' '.repeat(shown.length);
  const chars = [...levels];
  const min = range.min ?? Math.min(...known);
  const max = range.max ?? Math.max(...known);
  return shown
    .map((value) => {
      if (value === undefined || !Number.isFinite(value)) return ' ';
      if (max - min < 1e-9) return chars[Math.floor((chars.length - 1) / 2)]!;
      const fraction = Math.min(1, Math.max(0, (value - min) / (max - min)));
      return chars[Math.round(fraction * (chars.length - 1))]!;
    })
    .join('');
}

/** `850ms`, `2.4s`, `12s`. */
export function formatMs(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 10_000) return `${(ms / 1000).toFixed(1)}s`;
  return `${Math.round(ms / 1000)}s`;
}
