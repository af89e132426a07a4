import { useEffect, useState } from 'react';
import type { Clock, TimerHandle } from '../shared/clock.js';

/**
 * Redraws every `everyMs` of `clock`'s timers, for what ages on screen ("3s ago", "in 2.5s"); the
 * component reads the time itself as it draws. Every tick redraws, so a countdown of the
 * dashboard's own runs on while a manual simulator clock stands still. Returns the tick's number.
 */
export function useClockTick(clock: Clock, everyMs: number): number {
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let timer: TimerHandle;
    const next = (): void => {
      setTick((count) => count + 1);
      timer = clock.setTimeout(next, everyMs);
    };
    timer = clock.setTimeout(next, everyMs);
    return () => clock.clearTimeout(timer);
  }, [clock, everyMs]);
  return tick;
}
