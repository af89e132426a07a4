import { useEffect, useState } from 'react';
import { useStdout } from 'ink';

export interface TerminalSize {
  columns: number;
  rows: number;
}

/** Streams that are not terminals have no size; lay out for the classic 80×24 then. */
function read(stdout: NodeJS.WriteStream): TerminalSize {
  return { columns: stdout.columns || 80, rows: stdout.rows || 24 };
}

/** The size of the terminal Ink renders to, following resizes. */
export function useTerminalSize(): TerminalSize {
  const { stdout } = useStdout();
  const [size, setSize] = useState(() => read(stdout));
  useEffect(() => {
    const onResize = (): void => {
      const next = read(stdout);
      setSize((current) => (current.columns === next.columns && current.rows === next.rows ? current : next));
    };
    stdout.on('resize', onResize);
    // The size may have changed between the first render and this effect.
    onResize();
    return () => {
      stdout.off('resize', onResize);
    };
  }, [stdout]);
  return size;
}
