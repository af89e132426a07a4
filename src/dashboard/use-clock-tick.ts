import { useEffect, useState } from 'react';
import type { Clock, TimerHandle } from '../station/clock.js';

/** The clock's time, refreshed every `everyMs`, for what ages on screen ("3s ago", "in 2.5s"). */
export function useClockTick(clock: Clock, everyMs: number): number {
  const [now, setNow] = useState(() => clock.now());
  useEffect(() => {
    let timer: TimerHandle;
    const tick = (): void => {
      setNow(clock.now());
      timer = clock.setTimeout(tick, everyMs);
    };
    timer = clock.setTimeout(tick, everyMs);
    return () => clock.clearTimeout(timer);
  }, [clock, everyMs]);
  return now;
}
