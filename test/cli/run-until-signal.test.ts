/**
 * How the long-running commands end on signals (src/cli/run-until-signal.ts), in this process:
 * signals are emitted on `process`, so nothing is really killed, and `process.exit` is watched.
 * SIGHUP only: the test runner may have handlers of its own for SIGINT and SIGTERM.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { runUntilSignal } from '../../src/cli/run-until-signal.js';
import type { CliIo } from '../../src/cli/output.js';

function io(): CliIo & { errors: string[] } {
  const errors: string[] = [];
  const stream = (sink: string[]) => ({ write: (text: string) => sink.push(text) }) as unknown as NodeJS.WritableStream;
  return { errors, stdout: stream([]), stderr: stream(errors) };
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('runUntilSignal', () => {
  it('stops cleanly on SIGHUP (the terminal closed) and removes its handlers', async () => {
    const before = process.listenerCount('SIGHUP');
    const stop = vi.fn(async () => undefined);
    const cli = io();
    const running = runUntilSignal(cli, stop);
    expect(process.listenerCount('SIGHUP')).toBe(before + 1);
    process.emit('SIGHUP', 'SIGHUP');
    await running;
    expect(stop).toHaveBeenCalledTimes(1);
    expect(cli.errors.join('')).toContain('SIGHUP received, shutting down');
    expect(process.listenerCount('SIGHUP')).toBe(before);
  });

  it('a second signal while stopping exits at once with 128 + its number', async () => {
    const exit = vi.spyOn(process, 'exit').mockImplementation((() => undefined) as never);
    const cli = io();
    void runUntilSignal(cli, () => new Promise<void>(() => undefined)); // a stop that never ends
    const listener = process.listeners('SIGHUP').at(-1)!;
    try {
      process.emit('SIGHUP', 'SIGHUP');
      process.emit('SIGHUP', 'SIGHUP');
      expect(exit).toHaveBeenCalledWith(129);
      expect(cli.errors.join('')).toContain('SIGHUP again, exiting without a clean shutdown');
    } finally {
      process.off('SIGHUP', listener as (signal: NodeJS.Signals) => void);
      for (const name of ['SIGINT', 'SIGTERM'] as const) process.off(name, listener as (signal: NodeJS.Signals) => void);
    }
  });
});
