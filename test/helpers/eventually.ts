/**
 * The one bounded poll of the test suite: for state that another socket, thread or process changes
 * and that sends no event the test could wait on instead.
 *
 * It is `vi.waitFor` with three things added. `vi.waitFor` already polls with real timers while a
 * test fakes them (so a test on fake time can still wait for I/O) and rethrows the last error,
 * which for an `expect` is the last value seen; this adds:
 * - `false` counts as "not yet": `vi.waitFor` takes a returned `false` as success, so a bare
 *   predicate such as `() => client.connected` would pass at once;
 * - the failure names what was awaited, how long it waited, and the last failure (an assertion's
 *   message, which shows the last value, or "still false");
 * - a timeout with room for a loaded 2-core CI machine: it returns as soon as the check passes, so
 *   a long timeout costs nothing when things are quick.
 *
 * Prefer an assertion (`() => expect(x).toBe(1)`) to a predicate: its failure shows the value.
 * Never use it to show that something did not happen; wait for a later signal instead.
 */
import { vi } from 'vitest';

export interface EventuallyOptions {
  /** What the test waits for, for the failure message. */
  what?: string;
  /** Milliseconds to keep trying; 5000 unless told. */
  timeout?: number;
  /** Milliseconds between tries; 10 unless told. */
  interval?: number;
  /**
   * Asked before each try: a string means the check can never pass (the process it waits on has
   * exited, say), and `eventually` fails at once with it instead of waiting out the timeout.
   */
  failIf?: () => string | undefined;
}

/**
 * Calls `check` until it returns without throwing and with something other than `false`, and
 * resolves with what it returned; fails after `timeout` ms with the last failure.
 */
export async function eventually<T>(check: () => T | Promise<T>, options: EventuallyOptions = {}): Promise<Exclude<T, false>> {
  const { what = 'the check to pass', timeout = 5000, interval = 10, failIf } = options;
  const gaveUp = Symbol('gave up');
  let reason: string | undefined;
  let result: Exclude<T, false> | typeof gaveUp;
  try {
    result = await vi.waitFor(
      async () => {
        reason = failIf?.();
        if (reason !== undefined) return gaveUp;
        const value = await check();
        if (value === false) throw new Error('the check was still false');
        return value as Exclude<T, false>;
      },
      { timeout, interval },
    );
  } catch (error) {
    const last = error instanceof Error ? error.message : String(error);
    throw new Error(`timed out after ${timeout} ms waiting for ${what}: ${last}`, { cause: error });
  }
  if (result === gaveUp) throw new Error(`gave up waiting for ${what}: ${reason}`);
  return result;
}
