/**
 * The `/v1` faults in force, fetched while the fault menu is open and whenever `refresh` is
 * called (after the menu adds or clears one).
 */
import { useCallback, useEffect, useState } from 'react';
import type { DashboardControl } from '../client/control-client.js';
import type { ApiFaultInForce } from './FaultMenu.js';

export function useApiFaults(control: DashboardControl, open: boolean): { faults: readonly ApiFaultInForce[] | undefined; refresh: () => void } {
  const [faults, setFaults] = useState<readonly ApiFaultInForce[]>();
  const [asked, setAsked] = useState(0);
  const refresh = useCallback(() => setAsked((count) => count + 1), []);
  useEffect(() => {
    if (!open) return;
    let stopped = false;
    control.apiFaults().then(
      (list) => {
        if (!stopped) setFaults(list);
      },
      () => {
        if (!stopped) setFaults(undefined);
      },
    );
    return () => {
      stopped = true;
    };
  }, [control, open, asked]);
  return { faults, refresh };
}
