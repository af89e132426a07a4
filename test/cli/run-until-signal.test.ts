/**
 * How the long-running commands end on signals (src/cli/run-until-signal.ts), in this process:
 * signals are emitted on `process`, so nothing is really killed, and `process.exit` is watched.
 * SIGHUP only: the test runner may have handlers of its own for SIGINT and SIGTERM.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { STOP_BOUND_MS, runUntilSignal } from '../../src/cli/run-until-signal.js';
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

  it('a stop that does not finish within STOP_BOUND_MS exits with code 1 and says so', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { cli, exit, detach } = runWithStuckStop();
    try {
      process.emit('SIGHUP', 'SIGHUP');
      vi.advanceTimersByTime(STOP_BOUND_MS - 1);
      expect(exit).not.toHaveBeenCalled();
      vi.advanceTimersByTime(1);
      expect(exit).toHaveBeenCalledWith(1);
      expect(cli.errors.join('')).toContain(`the shutdown did not finish within ${STOP_BOUND_MS / 1000} s, exiting without a clean shutdown`);
    } finally {
      vi.useRealTimers();
      detach();
    }
  });

  it('a stop that finishes in time leaves no timer behind to exit later', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const exit = vi.spyOn(process, 'exit').mockImplementation((() => undefined) as never);
    try {
      const running = runUntilSignal(io(), async () => undefined);
      process.emit('SIGHUP', 'SIGHUP');
      await running;
      vi.advanceTimersByTime(10 * STOP_BOUND_MS);
      expect(exit).not.toHaveBeenCalled();
    } finally {
      vi.useRealTimers();
    }
  });

  it('a second signal while stopping exits at once with 128 + its number', async () => {
    const { cli, exit, detach } = runWithStuckStop();
    try {
      process.emit('SIGHUP', 'SIGHUP');
      process.emit('SIGHUP', 'SIGHUP');
      expect(exit).toHaveBeenCalledWith(129);
      expect(cli.errors.join('')).toContain('SIGHUP again, exiting without a clean shutdown');
    } finally {
      detach();
    }
  });
});

/** `runUntilSignal` with a stop that never ends and `process.exit` stubbed; `detach` removes its signal listeners. */
function runWithStuckStop() {
  const exit = vi.spyOn(process, 'exit').mockImplementation((() => undefined) as never);
  const cli = io();
  void runUntilSignal(cli, () => new Promise<void>(() => undefined));
  const listener = process.listeners('SIGHUP').at(-1)! as (signal: NodeJS.Signals) => void;
  const detach = (): void => {
    for (const name of ['SIGHUP', 'SIGINT', 'SIGTERM'] as const) process.off(name, listener);
  };
  return { cli, exit, detach };
}
