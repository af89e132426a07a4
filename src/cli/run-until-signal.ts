/**
 * Keeps a started service running until SIGINT, SIGTERM or SIGHUP (its terminal closed), then
 * stops it cleanly: stations say `offline`, ports are released. A second signal while stopping
 * exits at once, with 128 + that signal's number as a shell would report it.
 */
import { constants } from 'node:os';
import { notice, type CliIo } from './output.js';

/** The signals that end a long-running command (and that `run` forwards to its command). */
export const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

export function runUntilSignal(io: CliIo, stop: () => Promise<void>): Promise<void> {
  return new Promise((resolve, reject) => {
    let stopping = false;
    const onSignal = (signal: NodeJS.Signals): void => {
      if (stopping) {
        notice(io, `${signal} again, exiting without a clean shutdown`);
        process.exit(128 + constants.signals[signal]);
        return;
      }
      stopping = true;
      notice(io, `${signal} received, shutting down`);
      stop().then(() => {
        for (const name of STOP_SIGNALS) process.off(name, onSignal);
        resolve();
      }, reject);
    };
    for (const name of STOP_SIGNALS) process.on(name, onSignal);
  });
}
