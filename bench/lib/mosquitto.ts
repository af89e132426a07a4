/**
 * A private Mosquitto for the benchmarks: its own config in a temporary directory, a free port on
 * loopback, no persistence, TCP_NODELAY, no connection limit. Each measurement starts a fresh one,
 * so the retained messages and sessions of one run do not weigh on the next.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from './free-port.js';
import { readKernelMemory, type KernelMemory } from './proc.js';

export interface MosquittoOptions {
  /** The Mosquitto binary. @default "mosquitto" (from PATH) */
  binary?: string;
  /** How long to wait for the port to accept connections. @default 10000 */
  startTimeoutMs?: number;
}

export interface StartedMosquitto {
  readonly url: string;
  readonly pid: number;
  /** Memory of the broker process now, from /proc. */
  memory(): KernelMemory | undefined;
  stop(): Promise<void>;
}

/** The config file: one loopback listener, anonymous access, no persistence (mosquitto.conf(5)). */
export function mosquittoConfig(port: number): string {
  return [`listener ${port} 127.0.0.1`, 'allow_anonymous true', 'set_tcp_nodelay true', 'max_connections -1', 'persistence false', 'log_dest stderr', 'log_type error', 'log_type warning', ''].join(
    '\n',
  );
}

export async function startMosquitto(options: MosquittoOptions = {}): Promise<StartedMosquitto> {
  const port = await freePort();
  const dir = mkdtempSync(path.join(tmpdir(), 'station-sim-bench-mosquitto-'));
  // Mosquitto drops privileges to the `mosquitto` user when started as root; it must still read its config.
  chmodSync(dir, 0o755);
  const config = path.join(dir, 'mosquitto.conf');
  writeFileSync(config, mosquittoConfig(port), { mode: 0o644 });
  const child: ChildProcess = spawn(options.binary ?? 'mosquitto', ['-c', config], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-2000);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const cleanup = (): void => rmSync(dir, { recursive: true, force: true });
  try {
    await waitForPort(port, options.startTimeoutMs ?? 10_000, exited);
  } catch (error) {
    child.kill('SIGKILL');
    cleanup();
    throw new Error(`mosquitto did not start on port ${port}: ${(error as Error).message} ${stderr.trim()}`);
  }
  return {
    url: `mqtt://127.0.0.1:${port}`,
    pid: child.pid ?? -1,
    memory: () => readKernelMemory(child.pid ?? -1),
    stop: async () => {
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(killer);
      cleanup();
    },
  };
}

/** Resolves once something accepts TCP connections on `port`; rejects if `exited` resolves first or after `timeoutMs`. */
export async function waitForPort(port: number, timeoutMs: number, exited: Promise<void>): Promise<void> {
  let gone = false;
  void exited.then(() => {
    gone = true;
  });
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (gone) throw new Error('it exited');
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect({ port, host: '127.0.0.1' });
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`no answer within ${timeoutMs} ms`);
}
