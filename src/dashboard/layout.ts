/** How the screen is cut up for a terminal size, and which rows of the fleet list are drawn. */

export interface ScreenLayout {
  width: number;
  /** Lines the dashboard draws. */
  height: number;
  /** Station rows in the table (not counting its header). */
  tableRows: number;
  /** Lines of the event log (not counting its title). */
  logRows: number;
  /** Whether log lines start with the time: from 60 columns on, below that the text needs the room. */
  showClock: boolean;
  /** Lines of the caption (the narrated demo's, under the addresses); 0 without one. */
  captionLines: number;
  /**
   * False below `MIN_COLUMNS` × `MIN_ROWS`: a frame wider than the terminal wraps into garbage, and
   * one as tall scrolls its header away and is redrawn from a cleared screen on every update, so
   * the dashboard shows a one-line notice instead.
   */
  fits: boolean;
}

/** Header, addresses, status line, table header, five lines of detail, log title, footer. */
const FIXED_LINES = 11;
export const DETAIL_LINES = 5;

/**
 * The smallest terminal the dashboard is drawn in: the table's fixed columns, and three lines
 * beyond the fixed ones, which at 15 rows (a frame of 14) are two table rows and one log line. A
 * caption takes lines of its own above that.
 */
export const MIN_COLUMNS = 40;
export const MIN_ROWS = FIXED_LINES + 3 + 1;

export function layoutFor(columns: number, rows: number, captionLines = 0): ScreenLayout {
  const fixed = FIXED_LINES + captionLines;
  const fits = columns >= MIN_COLUMNS && rows >= MIN_ROWS + captionLines;
  const width = Math.max(MIN_COLUMNS, columns);
  // One line short of the terminal: once a frame is as tall as the terminal, Ink clears the whole
  // screen before every frame (ink.js onRender), which flickers on each update.
  const height = Math.max(fixed + 3, rows - 1);
  const free = height - fixed;
  const logRows = Math.min(12, Math.max(1, Math.round(free * 0.35)));
  return { width, height, tableRows: Math.max(1, free - logRows), logRows, showClock: width >= 60, captionLines, fits };
}

/**
 * The first row to draw so that the selected row is visible, moving as little as possible from the
 * previous first row (a list that jumps to centre on every key press is hard to follow).
 */
export function scrollTop(previousTop: number, selected: number, visible: number, total: number): number {
  let top = Math.min(previousTop, selected);
  if (selected >= top + visible) top = selected - visible + 1;
  return Math.max(0, Math.min(top, total - visible));
}
