import { useEffect, useState } from 'react';
import type { Clock, TimerHandle } from '../shared/clock.js';
import { ControlPlaneError, type DashboardControl } from '../client/control-client.js';

export interface HealthProgress {
  ready: boolean;
  /** Stations that have come up, online or offline. */
  settled: number;
  total: number;
  /** Why the last poll failed, if it did. */
  error?: string;
  /** The broker the stations use, as health names it (absent from an older simulator). */
  mqtt?: { url: string; embedded: boolean };
}

/**
 * Polls `GET /sim/v1/health` until the fleet is ready, for the progress bar shown while a large
 * fleet connects. Returns `undefined` until the first answer, and after a refused control token.
 */
export function useHealthProgress(control: DashboardControl, clock: Clock, pollMs: number): HealthProgress | undefined {
  const [progress, setProgress] = useState<HealthProgress>();
  useEffect(() => {
    let timer: TimerHandle | undefined;
    let stopped = false;
    const poll = async (): Promise<void> => {
      timer = undefined;
      let ready = false;
      try {
        const health = await control.health();
        ready = health.ready;
        if (!stopped) {
          setProgress({ ready, settled: health.stations.online + health.stations.offline, total: health.stations.total, ...(health.mqtt ? { mqtt: health.mqtt } : {}) });
        }
      } catch (error) {
        // A refused control token will not be accepted on the next try either. No progress then:
        // a bar stuck at 0/0 would hide the stream's own "events refused: …", which says why.
        if (error instanceof ControlPlaneError && error.status === 401) {
          if (!stopped) setProgress(undefined);
          return;
        }
        if (!stopped) {
          setProgress((current) => ({ ready: false, settled: current?.settled ?? 0, total: current?.total ?? 0, error: (error as Error).message, ...(current?.mqtt ? { mqtt: current.mqtt } : {}) }));
        }
      }
      if (!stopped && !ready) timer = clock.setTimeout(() => void poll(), pollMs);
    };
    void poll();
    return () => {
      stopped = true;
      if (timer !== undefined) clock.clearTimeout(timer);
    };
  }, [control, clock, pollMs]);
  return progress;
}
