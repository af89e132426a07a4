/**
 * The child side of the harness protocol (`protocol.ts`). A child script calls `serveParent` with
 * the work that makes it ready and the methods the harness may call afterwards.
 */
import type { CallMessage, ChildMessage } from './protocol.js';

/** A method the harness can call; its result must be JSON-serialisable. */
export type ChildMethod = (params: unknown) => unknown;

export interface ServeOptions {
  /** Methods the harness may call after `ready`. */
  methods?: Record<string, ChildMethod>;
  /**
   * Runs on the `stop` call; its result is the reply. The process exits right after the reply,
   * so whatever `stop` leaves open does not matter (the run is over).
   * @default nothing to do
   */
  stop?: () => unknown;
}

function send(message: ChildMessage): Promise<void> {
  return new Promise((resolve) => {
    if (!process.send || !process.connected) {
      resolve();
      return;
    }
    process.send(message, undefined, {}, () => resolve());
  });
}

/** Tells the harness how far the child is (shown if the child fails or times out). */
export function reportProgress(data: unknown): void {
  void send({ kind: 'progress', data });
}

/** Runs a full garbage collection when the process was started with `--expose-gc` (the harness does that). */
export function collectGarbage(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  gc?.();
}

/**
 * Runs `start`, sends its result as `ready`, then answers calls until `stop`. A failure of `start`
 * is reported as `failed` and the process exits with code 1.
 */
export async function serveParent(start: () => Promise<unknown>, options: ServeOptions = {}): Promise<void> {
  if (!process.send) throw new Error('this script is a benchmark child: run it through bench/run.ts (it needs an IPC channel)');
  // The harness went away (crashed or was interrupted): nothing will stop this child otherwise.
  process.on('disconnect', () => process.exit(1));
  process.on('message', (message: CallMessage) => {
    if (message?.kind !== 'call') return;
    void answer(message, options);
  });
  try {
    await send({ kind: 'ready', data: await start() });
  } catch (error) {
    await send({ kind: 'failed', error: describe(error) });
    process.exit(1);
  }
}

async function answer(message: CallMessage, options: ServeOptions): Promise<void> {
  const isStop = message.method === 'stop';
  const method = isStop ? (options.stop ?? (() => undefined)) : options.methods?.[message.method];
  try {
    if (!method) throw new Error(`unknown method ${message.method}`);
    const data = await method(message.params);
    await send({ kind: 'reply', id: message.id, data });
  } catch (error) {
    await send({ kind: 'reply', id: message.id, error: describe(error) });
  }
  if (isStop) process.exit(0);
}

function describe(error: unknown): string {
  return error instanceof Error ? (error.stack ?? error.message) : String(error);
}
