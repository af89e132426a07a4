/**
 * Keeps a started service running until SIGINT, SIGTERM or SIGHUP (its terminal closed), then
 * stops it cleanly: stations say `offline`, ports are released. A second signal while stopping
 * exits at once, with 128 + that signal's number as a shell would report it. A stop that has not
 * finished after `STOP_BOUND_MS` (a broker that went away or went silent during it, say) exits
 * with code 1 and one line: whatever the broker does, a stop stops.
 */
import { constants } from 'node:os';
import { notice, type CliIo } from './output.js';

/** The signals that end a long-running command (and that `run` forwards to its command). */
export const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/**
 * The longest a stop takes: past it the process exits without finishing (docs/scale-out.md,
 * "Stopping"). A station waits at most twice `STOP_LINGER_MS` on its broker; this bounds the rest
 * (the fleet agent, the API, the broker's own stop) and a fleet too large to stop in time.
 */
export const STOP_BOUND_MS = 15_000;

export interface RunUntilSignalOptions {
  /** @default STOP_BOUND_MS */
  stopBoundMs?: number;
}

export function runUntilSignal(io: CliIo, stop: () => Promise<void>, options: RunUntilSignalOptions = {}): Promise<void> {
  const boundMs = options.stopBoundMs ?? STOP_BOUND_MS;
  return new Promise((resolve, reject) => {
    let stopping = false;
    const onSignal = (signal: NodeJS.Signals): void => {
      if (stopping) {
        notice(io, `${signal} again, exiting without a clean shutdown`);
        process.exit(128 + constants.signals[signal]);
        return;
      }
      stopping = true;
      notice(io, `${stopCause(signal)}, shutting down`);
      // Not unref'd: a stop stuck on nothing that keeps the event loop alive must still end here.
      const bound = setTimeout(() => {
        notice(io, `the shutdown did not finish within ${boundMs / 1000} s, exiting without a clean shutdown`);
        process.exit(1);
      }, boundMs);
      const finished = (): void => {
        clearTimeout(bound);
        for (const name of STOP_SIGNALS) process.off(name, onSignal);
      };
      stop().then(
        () => {
          finished();
          resolve();
        },
        (error: unknown) => {
          finished();
          reject(error);
        },
      );
    };
    for (const name of STOP_SIGNALS) process.on(name, onSignal);
  });
}

/** How often a CLI started by npm checks that its parent is still there. */
const PARENT_CHECK_MS = 500;

/**
 * Under npm (`npm start`, `npx station-sim …`) the CLI runs as `npm → sh -c → node`. `kill <npm's
 * pid>` makes npm pass SIGTERM to the shell, which dies of it without passing it on (dash, the
 * usual /bin/sh, does not exec a `-c` command), and the simulator lived on under PID 1 holding its
 * ports. Node has no parent-death signal, so the CLI looks: once its parent is gone, it stops as
 * on SIGHUP (its controlling process hung up). Only under npm (npm sets `npm_lifecycle_event`): a
 * CLI put in the background with `nohup` or `disown` is meant to outlive its shell.
 */
export function stopWhenOrphaned(env: NodeJS.ProcessEnv, signal: NodeJS.Signals = 'SIGHUP'): void {
  if (env.npm_lifecycle_event === undefined) return;
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    orphaned = { parent, signal };
    process.kill(process.pid, signal);
  }, PARENT_CHECK_MS);
  timer.unref();
}

/**
 * Set once the CLI sent itself the stop signal because its parent was gone. Module state, and the
 * one piece of it here: a signal carries no data, and the log must not say a SIGHUP arrived when
 * none did (`kill` of `npx` sends SIGTERM to npm, whose shell dies without passing it on).
 */
let orphaned: { parent: number; signal: NodeJS.Signals } | undefined;

/**
 * Why the CLI stops, for its log: the signal that arrived (`SIGTERM received`), or, when it
 * stopped itself as orphaned, that its parent is gone, never the signal it sent itself.
 */
export function stopCause(signal: NodeJS.Signals): string {
  if (orphaned?.signal === signal) {
    const by = process.env.npm_lifecycle_event === 'npx' ? 'npx' : 'npm';
    return `its parent, the shell ${by} ran it in (pid ${orphaned.parent}), is gone (${by} was killed, or its terminal closed)`;
  }
  return `${signal} received`;
}
