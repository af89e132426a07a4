/**
 * The event log's entries cut into screen lines. A line wider than the log wraps at its words; an
 * unlock chain wider than the log wraps at its steps, the lines after its first indented, so its outcome (`· ok`, `· failed: …`) is never cut
 * off at the right edge; where the log has too few lines for a whole chain, middle steps give way
 * to `…` before the outcome does. Pure, so what a narrow terminal shows can be tested directly.
 */
import { entrySegments, type LogEntry, type LogTone } from './activity-log.js';
import { cellWidth, cutToWidth, formatClock } from './format.js';

export interface LogScreenLine {
  /** Stable across redraws: the entry's id and the line's place in it. */
  key: string;
  /** `HH:MM:SS ` on an entry's first line, blanks as wide on the lines after; empty without clock. */
  clock: string;
  text: string;
  tone: LogTone;
}

export interface LogLinesOptions {
  /** Cells per line. */
  width: number;
  /** Lines there are; the newest entries fill them from the bottom. */
  height: number;
  showClock: boolean;
}

/** How far continuation lines of a wrapped entry are indented. */
const INDENT = '  ';
const CLOCK_CELLS = 9;

/** The lines to draw, top to bottom: the newest entries that fit, whole where they can be. */
export function logLines(entries: readonly LogEntry[], { width, height, showClock }: LogLinesOptions): LogScreenLine[] {
  const room = Math.max(1, width - (showClock ? CLOCK_CELLS : 0));
  const blocks: LogScreenLine[][] = [];
  let used = 0;
  for (let index = entries.length - 1; index >= 0 && used < height; index -= 1) {
    const entry = entries[index]!;
    const { segments, tone } = entrySegments(entry);
    // A line wraps at its words and is cut where the log ends; a chain gives up middle steps instead.
    const texts =
      entry.kind === 'unlock' ? fitSegments(segments, room, height - used) : cutLines(wrapSegments(segments.join(' ').split(' '), room), height - used, room);
    used += texts.length;
    blocks.push(
      texts.map((text, line) => ({
        key: `${entry.id}:${line}`,
        clock: showClock ? (line === 0 ? `${formatClock(entry.at)} ` : ' '.repeat(CLOCK_CELLS)) : '',
        text,
        tone,
      })),
    );
  }
  return blocks.reverse().flat();
}

/** `segments` in at most `lines` lines of `width` cells. */
export function fitSegments(segments: readonly string[], width: number, lines: number): string[] {
  const whole = wrapSegments(segments, width);
  if (whole.length <= lines || segments.length < 3) return whole.slice(0, lines);
  // Too tall: keep the head and as many of the last pieces as fit, the outcome above all.
  for (let kept = segments.length - 2; kept >= 1; kept -= 1) {
    const squeezed = wrapSegments([segments[0]!, '…', ...segments.slice(segments.length - kept)], width);
    if (squeezed.length <= lines) return squeezed;
  }
  return wrapSegments([segments[0]!, '…', segments.at(-1)!], width).slice(0, lines);
}

/** The first `lines` of `wrapped`, the last one ending in `…` where some were left out. */
function cutLines(wrapped: string[], lines: number, width: number): string[] {
  if (wrapped.length <= lines) return wrapped;
  const kept = wrapped.slice(0, lines);
  kept[lines - 1] = cutToWidth(`${kept[lines - 1]!}…`, width);
  return kept;
}

/** Greedy wrap at piece boundaries; a piece wider than a line on its own is cut with `…`. */
function wrapSegments(segments: readonly string[], width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const segment of segments) {
    if (line === '') line = segment;
    else if (cellWidth(line) + 1 + cellWidth(segment) <= width) line += ` ${segment}`;
    else {
      lines.push(line);
      line = INDENT + segment;
    }
  }
  lines.push(line);
  return lines.map((each) => cutToWidth(each, width));
}
