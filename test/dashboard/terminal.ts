/**
 * A fake terminal of a chosen size for Ink: a TTY stdout that records what is written and can be
 * resized, and a TTY stdin that keys can be typed into. ink-testing-library's streams are fixed at
 * 100 columns with no rows, and the dashboard's layout depends on both.
 */
import { EventEmitter } from 'node:events';
import type { ReactElement } from 'react';
import { render, type Instance } from 'ink';

export class FakeStdout extends EventEmitter {
  readonly isTTY = true;
  columns: number;
  rows: number;
  readonly writes: string[] = [];

  constructor(columns: number, rows: number) {
    super();
    this.columns = columns;
    this.rows = rows;
  }

  write = (data: string): boolean => {
    this.writes.push(data);
    return true;
  };

  /** Everything written, without colours, as one string. */
  text(): string {
    return stripAnsi(this.writes.join(''));
  }

  lastFrame(): string {
    return stripAnsi(this.writes.at(-1) ?? '');
  }

  resize(columns: number, rows: number): void {
    this.columns = columns;
    this.rows = rows;
    this.emit('resize');
  }
}

export class FakeStdin extends EventEmitter {
  readonly isTTY = true;
  #data: string | null = null;

  /** Types `data` as if it came from the keyboard. */
  type(data: string): void {
    this.#data = data;
    this.emit('readable');
    this.emit('data', data);
  }

  read = (): string | null => {
    const data = this.#data;
    this.#data = null;
    return data;
  };

  setEncoding(): void {}
  setRawMode(): void {}
  resume(): void {}
  pause(): void {}
  ref(): void {}
  unref(): void {}
}

export const KEYS = {
  up: '\u001B[A',
  down: '\u001B[B',
  right: '\u001B[C',
  left: '\u001B[D',
  enter: '\r',
  escape: '\u001B',
  tab: '\t',
  backspace: '\u007F',
} as const;

// CSI sequences (colours, cursor moves) and OSC sequences (titles, links).
const ANSI = /\u001B\[[0-9;?]*[ -/]*[@-~]|\u001B\][^\u0007]*\u0007/g;

export function stripAnsi(text: string): string {
  return text.replace(ANSI, '');
}

export interface TerminalRender {
  stdout: FakeStdout;
  stdin: FakeStdin;
  instance: Instance;
  renders: number;
  lastFrame(): string;
}

/** Renders `tree` in a fake terminal, one full frame per write (Ink's debug mode). */
export function renderInTerminal(tree: ReactElement, size: { columns: number; rows: number }): TerminalRender {
  const stdout = new FakeStdout(size.columns, size.rows);
  const stdin = new FakeStdin();
  const result: TerminalRender = {
    stdout,
    stdin,
    renders: 0,
    lastFrame: () => stdout.lastFrame(),
    instance: undefined as unknown as Instance,
  };
  result.instance = render(tree, {
    stdout: stdout as unknown as NodeJS.WriteStream,
    stdin: stdin as unknown as NodeJS.ReadStream,
    stderr: new FakeStdout(size.columns, size.rows) as unknown as NodeJS.WriteStream,
    debug: true,
    exitOnCtrlC: false,
    patchConsole: false,
    onRender: () => {
      result.renders += 1;
    },
  });
  return result;
}

/** Lets pending timers and I/O run; for a lone Escape, which Ink holds for one `setImmediate`. */
export function settle(ms = 0): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The suite's one bounded poll, for the dashboard tests that import it from here. */
export { eventually } from '../helpers/eventually.js';
