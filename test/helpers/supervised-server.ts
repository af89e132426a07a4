/**
 * A server program (Mosquitto, redis-server) run for a test, that the test can kill and start
 * again on the same port: the one piece of child-process handling the broker and Redis helpers share.
 */
import { spawn, type ChildProcess } from 'node:child_process';

export interface SupervisedServer {
  /** Starts the program and resolves once `ready` does; rejects if it exits first, with its stderr. */
  start(): Promise<void>;
  /** Kills it (SIGKILL: nothing is saved, no clean shutdown) and waits until it has exited. */
  kill(): Promise<void>;
  /** Sends a signal (SIGHUP: reload) to the running program; false if it is not running. */
  signal(name: NodeJS.Signals): boolean;
  /** The last lines the running (or last) program wrote on stderr, to say why it is not ready. */
  output(): string;
}

/** How much of a program's stderr is kept: its last lines are what explain a failure. */
const KEPT_OUTPUT = 8192;

export function supervisedServer(command: string, args: readonly string[], ready: () => Promise<void>): SupervisedServer {
  let child: ChildProcess | undefined;
  let errors = '';
  return {
    start: async () => {
      const started = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'] });
      child = started;
      errors = '';
      started.stderr.setEncoding('utf8').on('data', (chunk: string) => (errors = (errors + chunk).slice(-KEPT_OUTPUT)));
      const exited = new Promise<never>((_, reject) => started.once('exit', (code) => reject(new Error(`${command} exited with ${code}: ${errors.trim()}`))));
      exited.catch(() => undefined);
      await Promise.race([ready(), exited]);
    },
    kill: async () => {
      const running = child;
      child = undefined;
      if (!running || running.exitCode !== null) return;
      const exited = new Promise((resolve) => running.once('exit', resolve));
      running.kill('SIGKILL');
      await exited;
    },
    signal: (name) => child !== undefined && child.exitCode === null && child.kill(name),
    output: () => errors,
  };
}
