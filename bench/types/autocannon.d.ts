/**
 * The part of autocannon 8's programmatic API the load driver uses. autocannon ships no types
 * and `@types/autocannon` is not a dependency; this covers only what `bench/children/load.ts` calls
 * (see node_modules/autocannon/README.md, "Programmatically").
 */
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  interface AutocannonRequest {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string;
    /** Called before each request; returns the request to send. */
    setupRequest?: (request: AutocannonRequest, context: Record<string, unknown>) => AutocannonRequest;
  }

  interface AutocannonOptions {
    url: string;
    connections?: number;
    /** Seconds. */
    duration?: number;
    /** Total requests; when set, the run ends once they are answered (or time out). */
    amount?: number;
    /** Requests per second over all connections. */
    overallRate?: number;
    pipelining?: number;
    /** Seconds before a request counts as a timeout. */
    timeout?: number;
    method?: string;
    headers?: Record<string, string>;
    requests?: AutocannonRequest[];
    /** A response body for which it returns false counts as a mismatch. */
    verifyBody?: (body: string) => boolean;
  }

  interface Histogram {
    average: number;
    mean: number;
    stddev: number;
    min: number;
    max: number;
    p50: number;
    p90: number;
    p99: number;
    total: number;
    sent?: number;
  }

  interface AutocannonResult {
    duration: number;
    errors: number;
    timeouts: number;
    mismatches: number;
    non2xx: number;
    resets: number;
    '2xx': number;
    statusCodeStats: Record<string, { count: number }>;
    latency: Histogram;
    requests: Histogram & { sent: number };
  }

  interface Instance extends EventEmitter {
    on(event: 'response', listener: (client: unknown, statusCode: number, resBytes: number, responseTime: number) => void): this;
    on(event: 'reqError', listener: (error: Error) => void): this;
    on(event: string, listener: (...args: unknown[]) => void): this;
    stop(): void;
  }

  function autocannon(options: AutocannonOptions, callback: (error: Error | null, result: AutocannonResult) => void): Instance;
  export default autocannon;
  export type { AutocannonOptions, AutocannonResult, AutocannonRequest };
}
