/**
 * Driving the real CLI in a real terminal: tmux sessions made with `new-session -d`, keys sent with
 * `send-keys`, the screen read with `capture-pane`. Shared by the dashboard's and the demo's
 * terminal tests.
 */
import { spawnSync } from 'node:child_process';
import { eventually } from './eventually.js';
import { toolAvailable } from './required-tool.js';

/**
 * Whether tmux is installed. Under CI it must be: a missing tmux fails the file instead of skipping
 * it silently; elsewhere the skip is said in one loud line.
 */
export function tmuxAvailable(what: string): boolean {
  return toolAvailable({ command: 'tmux', probe: ['-V'], what, aptPackage: 'tmux' });
}

export const tmux = (...args: string[]) => spawnSync('tmux', args, { encoding: 'utf8' });

/** What the session's terminal shows now. */
export const screen = (session: string): string => tmux('capture-pane', '-p', '-t', session).stdout;

/** The screen with its escape codes (`capture-pane -e`), to see colours. */
export const screenWithCodes = (session: string): string => tmux('capture-pane', '-p', '-e', '-t', session).stdout;

/** Waits for the screen to satisfy `predicate`; a timeout shows the last screen. */
export async function waitForScreen(session: string, predicate: (text: string) => boolean, what: string, timeoutMs = 20_000): Promise<string> {
  return eventually(
    () => {
      const text = screen(session);
      if (!predicate(text)) throw new Error(`screen:\n${text}`);
      return text;
    },
    { what, timeout: timeoutMs, interval: 200 },
  );
}
