/**
 * Keeps a started service running until SIGINT or SIGTERM, then stops it cleanly. A second signal
 * while stopping exits at once.
 */
import { notice, type CliIo } from './output.js';

export function runUntilSignal(io: CliIo, stop: () => Promise<void>): Promise<void> {
  return new Promise((resolve, reject) => {
    let stopping = false;
    const onSignal = (signal: NodeJS.Signals): void => {
      if (stopping) {
        notice(io, `${signal} again, exiting without a clean shutdown`);
        process.exit(130);
      }
      stopping = true;
      notice(io, `${signal} received, shutting down`);
      stop().then(() => {
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
        resolve();
      }, reject);
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
}
