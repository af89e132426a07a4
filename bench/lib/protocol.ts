/**
 * The messages between the harness and the child processes it measures, over Node's IPC channel.
 * A child says `ready` once (with what it measured or where it listens), may send `progress`, and
 * answers `call`s; `stop` is the call that ends it.
 */

/** Child → parent. */
export type ChildMessage =
  | { kind: 'ready'; data: unknown }
  | { kind: 'progress'; data: unknown }
  | { kind: 'reply'; id: number; data?: unknown; error?: string }
  | { kind: 'failed'; error: string };

/** Parent → child. */
export interface CallMessage {
  kind: 'call';
  id: number;
  method: string;
  params?: unknown;
}

/** Memory of one process as the process itself sees it. Bytes, except `maxRssKiB`. */
export interface ProcessMemory {
  rss: number;
  heapUsed: number;
  external: number;
  /** Peak resident set size since the process started (getrusage `ru_maxrss`), KiB. */
  maxRssKiB: number;
}

export function processMemory(): ProcessMemory {
  const usage = process.memoryUsage();
  return { rss: usage.rss, heapUsed: usage.heapUsed, external: usage.external, maxRssKiB: process.resourceUsage().maxRSS };
}
