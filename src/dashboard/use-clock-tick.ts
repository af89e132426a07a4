import { useEffect, useRef, useState } from 'react';
import type { Clock, TimerHandle } from '../station/clock.js';

/**
 * The time, read every `everyMs` of `clock`'s timers, for what ages on screen ("3s ago", "in
 * 2.5s"). `now` is the simulator's time when it runs scaled or manual; the ticks stay real, and
 * each one redraws, so a countdown of the dashboard's own runs while a manual clock stands still.
 */
export function useClockTick(clock: Clock, everyMs: number, now: () => number = () => clock.now()): number {
  const read = useRef(now);
  read.current = now;
  // A new object each tick, so the screen redraws even when the time read is the same.
  const [time, setTime] = useState(() => ({ now: now() }));
  useEffect(() => {
    let timer: TimerHandle;
    const tick = (): void => {
      setTime({ now: read.current() });
      timer = clock.setTimeout(tick, everyMs);
    };
    timer = clock.setTimeout(tick, everyMs);
    return () => clock.clearTimeout(timer);
  }, [clock, everyMs]);
  return time.now;
}
