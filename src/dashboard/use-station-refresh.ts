import { useEffect } from 'react';
import type { Clock, TimerHandle } from '../shared/clock.js';
import type { DashboardControl } from '../client/control-client.js';
import type { FleetStore } from './fleet-store.js';

/**
 * Keeps the selected station's full state fresh. The event stream carries status and lock states
 * but not faults, timers or the battery model, which the detail pane shows, so the selected
 * station is fetched shortly after it is selected and then every `everyMs`.
 */
export function useStationRefresh(
  control: DashboardControl,
  store: FleetStore,
  token: string | undefined,
  { clock, everyMs }: { clock: Clock; everyMs: number },
): void {
  useEffect(() => {
    if (token === undefined) return;
    let timer: TimerHandle | undefined;
    let stopped = false;
    const refresh = async (): Promise<void> => {
      try {
        const station = await control.station(token);
        // An event newer than this answer may be overwritten; the next refresh puts it right.
        if (!stopped) store.upsert(station);
      } catch {
        // Failures of the stream or of actions are shown elsewhere; a missed refresh is not news.
      }
      if (!stopped) timer = clock.setTimeout(() => void refresh(), everyMs);
    };
    // Wait a moment first: holding `j` over a long list should not fetch every station passed.
    timer = clock.setTimeout(() => void refresh(), Math.min(150, everyMs));
    return () => {
      stopped = true;
      if (timer !== undefined) clock.clearTimeout(timer);
    };
  }, [control, store, token, clock, everyMs]);
}
