import { useEffect, useState } from 'react';
import type { Clock, TimerHandle } from '../shared/clock.js';
import type { FleetStore } from './fleet-store.js';

/**
 * The store's version, passed on to React at most once per `intervalMs`: events are applied to
 * the store as they come, and the screen redraws for a whole batch of them. Returns the version,
 * which changes exactly when a redraw is due.
 */
export function useThrottledStore(store: FleetStore, intervalMs: number, clock: Clock): number {
  const [version, setVersion] = useState(store.version);
  useEffect(() => {
    let timer: TimerHandle | undefined;
    let lastFlush = -Infinity;
    const flush = (): void => {
      timer = undefined;
      lastFlush = clock.now();
      setVersion(store.version);
    };
    const unsubscribe = store.subscribe(() => {
      if (timer !== undefined) return;
      // Even with no wait due, go through a timer: the rest of a synchronous burst joins this flush.
      timer = clock.setTimeout(flush, Math.max(0, lastFlush + intervalMs - clock.now()));
    });
    // Changes made between the first render and this subscription.
    flush();
    return () => {
      unsubscribe();
      if (timer !== undefined) clock.clearTimeout(timer);
    };
  }, [store, intervalMs, clock]);
  return version;
}
