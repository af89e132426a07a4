import { useEffect, useRef, useState } from 'react';
import { useStdout } from 'ink';

export interface TerminalSize {
  columns: number;
  rows: number;
}

/** Erase the visible screen and go home (not `ESC c`, which resets the terminal, nor `ESC[3J`, which wipes the scrollback). */
const CLEAR_SCREEN = '\u001B[2J\u001B[H';

/** Streams that are not terminals have no size; lay out for the classic 80×24 then. */
function read(stdout: NodeJS.WriteStream): TerminalSize {
  return { columns: stdout.columns || 80, rows: stdout.rows || 24 };
}

/**
 * The size of the terminal Ink renders to, following resizes.
 *
 * Each change of size clears the screen before Ink redraws. A terminal that narrows rewraps the
 * last frame's lines onto more rows than Ink wrote, and Ink erases only as many lines as it wrote
 * (Ink 6 `ink.js` `resized`, `log-update.js`), so the tails stayed behind: `terminal too small
 * (39×13): ne` above the notice for 30×8. The clear is written straight to the terminal and runs
 * before Ink's own resize handler (`prependListener`): Ink then erases from the top of a blank
 * screen, which is harmless, and draws the frame from there. Clearing through Ink's `write`
 * instead would redraw the old frame, as wide as the old terminal, and bring the tails back.
 * The frame's boxes are sized in percent, not in columns, for the same reason: Ink lays out the
 * tree it has at the new width before React has rendered one for it.
 */
export function useTerminalSize(): TerminalSize {
  const { stdout } = useStdout();
  const [size, setSize] = useState(() => read(stdout));
  const drawn = useRef(size);
  useEffect(() => {
    const clear = (): void => {
      const next = read(stdout);
      if (stdout.isTTY && (next.columns !== drawn.current.columns || next.rows !== drawn.current.rows)) stdout.write(CLEAR_SCREEN);
    };
    const onResize = (): void => {
      const next = read(stdout);
      drawn.current = next;
      setSize((current) => (current.columns === next.columns && current.rows === next.rows ? current : next));
    };
    stdout.prependListener('resize', clear);
    stdout.on('resize', onResize);
    // The size may have changed between the first render and this effect.
    onResize();
    return () => {
      stdout.off('resize', clear);
      stdout.off('resize', onResize);
    };
  }, [stdout]);
  return size;
}
