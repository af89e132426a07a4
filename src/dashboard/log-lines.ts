/**
 * The event log's entries cut into screen lines. A line wider than the log wraps at its words; an
 * unlock chain wider than the log wraps at its steps, the lines after its first indented, so its outcome (`· ok`, `· failed: …`) is never cut
 * off at the right edge (an outcome wider than the line wraps at its words); where the log has too
 * few lines for a whole chain, middle steps give way to `…` before the outcome does, and on a single
 * line the outcome follows the head. Pure, so what a narrow terminal shows can be tested directly.
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

/** `segments` in at most `lines` lines of `width` cells; an unlock's outcome (its last piece) is kept first of all. */
export function fitSegments(segments: readonly string[], width: number, lines: number): string[] {
  const whole = wrapSegments(segments, width);
  if (whole.length <= lines) return whole;
  if (segments.length < 2) return cutLines(whole, lines, width);
  const head = segments[0]!;
  const outcome = segments.at(-1)!;
  // Too tall: keep the head and as many of the last pieces as fit, the outcome above all.
  for (let kept = segments.length - 2; kept >= 1; kept -= 1) {
    const squeezed = wrapSegments([head, '…', ...segments.slice(segments.length - kept)], width);
    if (squeezed.length <= lines) return squeezed;
  }
  const shortest = segments.length === 2 ? [head, outcome] : [head, '…', outcome];
  // One line: head and outcome on it, so the outcome at least begins where it can be read.
  if (lines <= 1) return [cutToWidth(shortest.join(' '), width)];
  return cutLines(wrapSegments(shortest, width), lines, width);
}

/** The first `lines` of `wrapped`, the last one ending in `…` where some were left out. */
function cutLines(wrapped: string[], lines: number, width: number): string[] {
  if (wrapped.length <= lines) return wrapped;
  const kept = wrapped.slice(0, lines);
  kept[lines - 1] = cutToWidth(`${kept[lines - 1]!}…`, width);
  return kept;
}

/**
 * Greedy wrap at piece boundaries; a piece wider than a line on its own (a long failure message)
 * wraps at its words, and only a word wider than a line is cut with `…`.
 */
function wrapSegments(segments: readonly string[], width: number): string[] {
  // An oversized piece becomes its words, the first of them starting a line of its own.
  const pieces: { text: string; breakBefore: boolean }[] = [];
  for (const segment of segments) {
    if (cellWidth(INDENT + segment) <= width) {
      pieces.push({ text: segment, breakBefore: false });
      continue;
    }
    // The leading mark (`·`, `→`) stays with the word after it.
    const words = segment.split(' ').filter((word) => word !== '');
    if (words.length > 1 && (words[0] === '·' || words[0] === '→')) words.splice(0, 2, `${words[0]} ${words[1]}`);
    words.forEach((word, index) => pieces.push({ text: word, breakBefore: index === 0 }));
  }
  const lines: string[] = [];
  let line = '';
  for (const { text, breakBefore } of pieces) {
    if (line === '') line = text;
    else if (!breakBefore && cellWidth(line) + 1 + cellWidth(text) <= width) line += ` ${text}`;
    else {
      lines.push(line);
      line = INDENT + text;
    }
  }
  lines.push(line);
  return lines.map((each) => cutToWidth(each, width));
}
