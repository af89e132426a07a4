import { useEffect, useRef, useState } from 'react';
import type { Clock, TimerHandle } from '../station/clock.js';

/**
 * The time, read from `now` every `everyMs` of `clock`'s timers, for what ages on screen ("3s ago",
 * "in 2.5s"). `now` is the simulator's time when it runs scaled or manual; the ticks stay real.
 */
export function useClockTick(clock: Clock, everyMs: number, now: () => number = () => clock.now()): number {
  const read = useRef(now);
  read.current = now;
  const [time, setTime] = useState(() => now());
  useEffect(() => {
    let timer: TimerHandle;
    const tick = (): void => {
      setTime(read.current());
      timer = clock.setTimeout(tick, everyMs);
    };
    timer = clock.setTimeout(tick, everyMs);
    return () => clock.clearTimeout(timer);
  }, [clock, everyMs]);
  return time;
}
