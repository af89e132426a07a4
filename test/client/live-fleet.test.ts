/**
 * The watched stream behind waitForStation/waitForLock: closing the client ends every wait at
 * once, also one that began before the first snapshot came.
 */
import { expect, it } from 'vitest';
import { LiveFleet } from '../../src/client/live-fleet.js';
import { ManualClock } from '../../src/shared/clock.js';

it('ends a wait begun before the first snapshot as soon as it is closed, not at its timeout', async () => {
  let closedStream = false;
  // A stream that never sends its snapshot (a slow or stuck server).
  const fleet = new LiveFleet(() => ({ close: () => { closedStream = true; } }) as never, new ManualClock());
  const waiting = fleet.waitForStation('CI-1', 'online', { timeoutMs: 60_000 });
  const settled = waiting.then(() => 'resolved', (error: Error) => error.message);
  await Promise.resolve();
  fleet.close();
  // The manual clock never moves: only the close can end the wait.
  expect(await settled).toBe('the control client was closed while waiting');
  expect(closedStream).toBe(true);
});
