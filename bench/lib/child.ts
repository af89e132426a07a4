/**
 * The parent side of the harness protocol: starts a script under `bench/children/` in a fresh Node
 * process (so its memory figures are its own), waits for it to be ready, calls its methods and
 * stops it. While a child runs, its peak RSS is also read from `/proc`, so even a child that
 * crashes or times out leaves a figure behind.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { CallMessage, ChildMessage } from './protocol.js';
import { readCpuSeconds, readKernelMemory } from './proc.js';

/**
 * The V8 flags the product runs with (`bin/station-sim.js`, `npm start`), given to every measured
 * child, baselines included, so that each figure is of the code as shipped and the ratios compare
 * like with like. A 32 MiB young generation halves how often the scavenger runs under the unlock
 * load's allocation rate (bench/README.md, "History"). test/bench/node-flags.test.ts keeps the
 * three places in step.
 */
export const PRODUCT_NODE_FLAGS = ['--max-semi-space-size=32'];

export interface ChildOptions {
  /** File name under `bench/children/`, e.g. `"boot-fleet.ts"`. */
  script: string;
  /** Arguments after the script. Never put secrets here: they show in `ps`. */
  args?: string[];
  /** Added to the environment (the access token travels here). */
  env?: Record<string, string>;
  /** Node flags before the script, e.g. `--cpu-prof`. `--expose-gc` and `--import tsx` are always set. */
  nodeFlags?: string[];
  /** How long the child may take to become ready before it is killed. @default 120000 */
  readyTimeoutMs?: number;
  /** Name in messages. @default script */
  label?: string;
  /** Copy the child's stderr to ours as it comes (for `--verbose`). @default false */
  echo?: boolean;
  /** Called with each `progress` message. */
  onProgress?: (data: unknown) => void;
}

/** How a child ended. */
export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** Raised when a child fails, times out or exits early; carries what is known about it. */
export class ChildError extends Error {
  constructor(
    message: string,
    readonly details: { label: string; elapsedMs: number; peakRssKiB: number | undefined; lastProgress: unknown; stderrTail: string },
  ) {
    super(message);
  }
}

const CHILDREN_DIR = fileURLToPath(new URL('../children/', import.meta.url));
const STDERR_TAIL_CHARS = 4000;

export class BenchChild<Ready = unknown> {
  readonly label: string;
  readonly pid: number;
  /** Resolves with the child's `ready` data; rejects with a `ChildError`. */
  readonly ready: Promise<Ready>;
  /** Resolves when the process has exited, however it ended. */
  readonly exited: Promise<ChildExit>;
  readonly #process: ChildProcess;
  readonly #startedAt = performance.now();
  readonly #calls = new Map<number, { resolve: (data: unknown) => void; reject: (error: Error) => void }>();
  readonly #sampler: NodeJS.Timeout;
  #nextId = 1;
  #stderr = '';
  #peakRssKiB: number | undefined;
  #lastProgress: unknown;
  #exit: ChildExit | undefined;

  constructor(options: ChildOptions) {
    this.label = options.label ?? options.script;
    const script = CHILDREN_DIR + options.script;
    this.#process = spawn(process.execPath, ['--expose-gc', ...PRODUCT_NODE_FLAGS, '--import', 'tsx', ...(options.nodeFlags ?? []), script, ...(options.args ?? [])], {
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      env: { ...process.env, ...options.env },
    });
    this.pid = this.#process.pid ?? -1;
    const collect = (chunk: Buffer): void => {
      if (options.echo) process.stderr.write(chunk);
      this.#stderr = (this.#stderr + chunk.toString('utf8')).slice(-STDERR_TAIL_CHARS);
    };
    this.#process.stdout?.on('data', collect);
    this.#process.stderr?.on('data', collect);
    this.#sampler = setInterval(() => this.#sample(), 250);
    this.#sampler.unref();

    this.exited = new Promise((resolve) => {
      this.#process.once('exit', (code, signal) => {
        clearInterval(this.#sampler);
        this.#exit = { code, signal };
        const error = this.#error(`${this.label} exited (${signal ?? `code ${code}`})`);
        for (const call of this.#calls.values()) call.reject(error);
        this.#calls.clear();
        resolve(this.#exit);
      });
    });

    this.ready = new Promise<Ready>((resolve, reject) => {
      const timeoutMs = options.readyTimeoutMs ?? 120_000;
      const timer = setTimeout(() => {
        reject(this.#error(`${this.label} was not ready after ${Math.round(timeoutMs / 1000)} s; killed`));
        this.kill();
      }, timeoutMs);
      this.#process.on('message', (message: ChildMessage) => {
        switch (message.kind) {
          case 'ready':
            clearTimeout(timer);
            resolve(message.data as Ready);
            break;
          case 'failed':
            clearTimeout(timer);
            reject(this.#error(`${this.label} failed: ${firstLine(message.error)}`));
            break;
          case 'progress':
            this.#lastProgress = message.data;
            options.onProgress?.(message.data);
            break;
          case 'reply': {
            const call = this.#calls.get(message.id);
            this.#calls.delete(message.id);
            if (message.error === undefined) call?.resolve(message.data);
            else call?.reject(new Error(`${this.label}: ${firstLine(message.error)}`));
            break;
          }
        }
      });
      void this.exited.then((exit) => {
        clearTimeout(timer);
        reject(this.#error(`${this.label} exited before it was ready (${exit.signal ?? `code ${exit.code}`})`));
      });
    });
    // Callers that never await `ready` (a child stopped early) must not crash the harness.
    this.ready.catch(() => undefined);
  }

  /** Peak RSS of the child process in KiB, as last read from /proc (or undefined off Linux). */
  get peakRssKiB(): number | undefined {
    this.#sample();
    return this.#peakRssKiB;
  }

  /** CPU seconds the child has used so far (from /proc), or undefined. */
  cpuSeconds(): number | undefined {
    return this.#exit ? undefined : readCpuSeconds(this.pid);
  }

  get lastProgress(): unknown {
    return this.#lastProgress;
  }

  get elapsedMs(): number {
    return performance.now() - this.#startedAt;
  }

  /** Calls a method of the child; rejects if it fails, takes longer than `timeoutMs`, or the child exits. */
  call<T>(method: string, params?: unknown, timeoutMs = 60_000): Promise<T> {
    if (this.#exit) return Promise.reject(this.#error(`${this.label} has exited`));
    const id = this.#nextId++;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#calls.delete(id);
        reject(this.#error(`${this.label}: ${method} took more than ${Math.round(timeoutMs / 1000)} s`));
      }, timeoutMs);
      this.#calls.set(id, {
        resolve: (data) => {
          clearTimeout(timer);
          resolve(data as T);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      });
      const message: CallMessage = { kind: 'call', id, method, ...(params === undefined ? {} : { params }) };
      this.#process.send(message);
    });
  }

  /**
   * Asks the child to stop (its `stop` method) and waits for it to exit; kills it if either takes
   * longer than `timeoutMs`. Resolves with the `stop` reply, or undefined when it had to be killed.
   */
  async stop<T = unknown>(timeoutMs = 30_000): Promise<T | undefined> {
    if (this.#exit) return undefined;
    let reply: T | undefined;
    try {
      reply = await this.call<T>('stop', undefined, timeoutMs);
    } catch {
      this.kill();
    }
    const killer = setTimeout(() => this.kill(), timeoutMs);
    await this.exited;
    clearTimeout(killer);
    return reply;
  }

  /** Ends the child at once (SIGKILL). */
  kill(): void {
    if (!this.#exit) this.#process.kill('SIGKILL');
  }

  #sample(): void {
    if (this.#exit) return;
    const memory = readKernelMemory(this.pid);
    if (memory) this.#peakRssKiB = Math.max(this.#peakRssKiB ?? 0, memory.hwmKiB);
  }

  #error(message: string): ChildError {
    return new ChildError(message, {
      label: this.label,
      elapsedMs: Math.round(this.elapsedMs),
      peakRssKiB: this.#peakRssKiB,
      lastProgress: this.#lastProgress,
      stderrTail: this.#stderr,
    });
  }
}

/** Starts a child; see `BenchChild`. */
export function startChild<Ready = unknown>(options: ChildOptions): BenchChild<Ready> {
  return new BenchChild<Ready>(options);
}

/** Starts a child, waits for its `ready` data, stops it, and returns the data. */
export async function runChildOnce<Ready>(options: ChildOptions): Promise<Ready> {
  const child = startChild<Ready>(options);
  try {
    return await child.ready;
  } finally {
    await child.stop();
  }
}

function firstLine(text: string): string {
  return text.split('\n')[0] ?? text;
}
