import { useEffect } from 'react';
import type { DashboardControl } from '../client/control-client.js';
import type { FleetStore } from './fleet-store.js';

/**
 * Feeds the event stream into the store while the dashboard is mounted. A station the stream
 * mentions but the snapshot did not have (it came up later, in another fleet process) is fetched.
 */
export function useEventStream(control: DashboardControl, store: FleetStore): void {
  useEffect(() => {
    let closed = false;
    const fetching = new Set<string>();
    const subscription = control.subscribe({
      onEvent: (event) => {
        store.apply(event);
        for (const token of store.takeUnknownTokens()) {
          if (fetching.has(token)) continue;
          fetching.add(token);
          control
            .station(token)
            .then(
              (station) => {
                if (!closed) store.upsert(station);
              },
              // The station's next event asks again; nothing to tell the user here.
              () => undefined,
            )
            .finally(() => fetching.delete(token));
        }
      },
      onState: (state) => store.setStream(state),
    });
    return () => {
      closed = true;
      subscription.close();
    };
  }, [control, store]);
}
