/**
 * Starts a real `redis-server` on a free port for a test (no persistence, loopback only), for the
 * Redis session store. Where `redis-server` is missing the suite says so loudly and skips; under
 * CI (CI set) that is a failure instead, as for Mosquitto (`.ci/run` installs both).
 */
import net from 'node:net';
import { afterAll, beforeAll, expect } from 'vitest';
import { eventually } from './eventually.js';
import { freePort } from './free-port.js';
import { supervisedServer } from './supervised-server.js';
import { toolAvailable } from './required-tool.js';

export const REDIS_SERVER = process.env.REDIS_SERVER_BIN ?? 'redis-server';

export function redisAvailable(): boolean {
  return toolAvailable({ command: REDIS_SERVER, probe: ['--version'], what: 'the Redis session store tests', aptPackage: 'redis-server' });
}

export interface RunningRedis {
  url: string;
  port: number;
  /** Stops the server (its data goes with it: nothing is saved). */
  kill(): Promise<void>;
  /** Starts it again on the same port, empty. */
  start(): Promise<void>;
  stop(): Promise<void>;
}

export async function startRedis(options: { password?: string } = {}): Promise<RunningRedis> {
  const port = await freePort();
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--unixsocket', '', '--loglevel', 'warning'];
  if (options.password !== undefined) args.push('--requirepass', options.password);
  const { start, kill } = supervisedServer(REDIS_SERVER, args, () => waitForPong(port));
  await start();
  return { url: `redis://127.0.0.1:${port}`, port, kill, start, stop: kill };
}

/** Resolves once the server answers PING (with `+PONG`, or `-NOAUTH` when it wants a password). */
async function waitForPong(port: number, timeoutMs = 5000): Promise<void> {
  const ping = (): Promise<string> =>
    new Promise<string>((resolve) => {
      const socket = net.connect({ port, host: '127.0.0.1' }, () => socket.write('PING\r\n'));
      socket.setEncoding('utf8');
      socket.once('data', (data: string) => {
        socket.destroy();
        resolve(data);
      });
      socket.once('error', () => resolve(''));
    });
  await eventually(async () => expect(await ping()).toMatch(/^(\+PONG|-NOAUTH)/), { timeout: timeoutMs, interval: 20, what: `redis-server on port ${port} to answer PING` });
}

/** What an API needs to keep its sessions in a store: nothing for memory, a URL and key prefix for Redis. */
export type SessionStoreOptions = { state?: string; stateKeyPrefix?: string };

export interface FileSessionStores {
  /** Whether `redis-server` is installed (when not, `each` has memory only). */
  readonly haveRedis: boolean;
  /** `[name, options]` for `describe.each`: memory, then Redis with a fresh key prefix per call. */
  readonly each: [string, () => SessionStoreOptions][];
  /** The file's Redis server, from its `beforeAll` on. */
  server(): RunningRedis;
  /** Keys of their own on the shared server, for one test. */
  freshPrefix(): string;
}

/**
 * The session stores a test file runs its API against: memory, and one Redis server for the whole
 * file (started in a `beforeAll`, stopped in an `afterAll`) where every API gets keys of its own.
 */
export function sessionStoresForFile(tag: string): FileSessionStores {
  const haveRedis = redisAvailable();
  let redis: RunningRedis | undefined;
  beforeAll(async () => {
    if (haveRedis) redis = await startRedis();
  });
  afterAll(async () => {
    await redis?.stop();
  });
  let prefixes = 0;
  const freshPrefix = (): string => `${tag}${(prefixes += 1)}-${process.pid}:`;
  const server = (): RunningRedis => {
    if (!redis) throw new Error('no Redis server: it starts in the file\'s beforeAll, when redis-server is installed');
    return redis;
  };
  const each: [string, () => SessionStoreOptions][] = [['memory', () => ({})]];
  if (haveRedis) each.push(['redis', () => ({ state: server().url, stateKeyPrefix: freshPrefix() })]);
  return { haveRedis, each, server, freshPrefix };
}
