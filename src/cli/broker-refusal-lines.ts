/**
 * What a standalone `station-sim broker` says of the clients it refuses. In `up` and `run` the
 * refusals reach `GET /sim/v1/health` and the event stream; a broker on its own has neither, so it
 * says them on stderr: the first refusal of a 10 s window in full, the rest of the window as one
 * count, and the totals at stop. A flood of refused clients is then a line every 10 s, not one per
 * packet, and nothing is unseen.
 */
import { REFUSAL_KINDS, type BrokerRefusal, type RefusalCounts } from '../broker/refusal-log.js';
import type { StartedBroker } from '../broker/embedded-broker.js';

export const REFUSAL_WINDOW_MS = 10_000;

/** `publish by station:PM-1 (client station-sim-PM-1) to stations/PM-2/status: not its topic` */
export function describeRefusal(refusal: BrokerRefusal): string {
  const who = refusal.identity ?? (refusal.clientId === undefined ? 'a client' : 'an unauthenticated client');
  const client = refusal.clientId === undefined ? '' : ` (client ${refusal.clientId})`;
  const topic = refusal.topic === undefined ? '' : ` ${refusal.kind === 'subscribe' ? 'to filter' : 'to'} ${refusal.topic}`;
  return `refused ${refusal.kind} by ${who}${client}${topic}: ${refusal.reason}`;
}

/** `12 (publish 10, subscribe 2)`; the kinds with none are left out. */
export function describeCounts(counts: RefusalCounts): string {
  const total = REFUSAL_KINDS.reduce((sum, kind) => sum + counts[kind], 0);
  const parts = REFUSAL_KINDS.filter((kind) => counts[kind] > 0).map((kind) => `${kind} ${counts[kind]}`);
  return `${total} (${parts.join(', ')})`;
}

const total = (counts: RefusalCounts): number => REFUSAL_KINDS.reduce((sum, kind) => sum + counts[kind], 0);

/**
 * Writes the broker's refusals to `say` as the header describes; returns a function that stops it
 * and says the totals, if there were any.
 */
export function reportRefusals(broker: Pick<StartedBroker, 'onRefused' | 'refusedCounts'>, say: (line: string) => void, windowMs = REFUSAL_WINDOW_MS): () => void {
  let windowOpen = false;
  let countsAtWindowStart: RefusalCounts | undefined;
  let timer: NodeJS.Timeout | undefined;
  const closeWindow = (): void => {
    timer = undefined;
    windowOpen = false;
    const now = broker.refusedCounts();
    const before = countsAtWindowStart!;
    const more: RefusalCounts = { ...now };
    for (const kind of REFUSAL_KINDS) more[kind] = now[kind] - before[kind];
    if (total(more) > 0) say(`broker: refused ${describeCounts(more)} more in the last ${windowMs / 1000} s`);
  };
  const stopListening = broker.onRefused((refusal, counts) => {
    if (windowOpen) return;
    windowOpen = true;
    countsAtWindowStart = { ...counts };
    say(`broker: ${describeRefusal(refusal)}`);
    timer = setTimeout(closeWindow, windowMs);
    timer.unref();
  });
  return () => {
    stopListening();
    if (timer) clearTimeout(timer);
    const counts = broker.refusedCounts();
    if (total(counts) > 0) say(`broker: refused ${describeCounts(counts)} in all`);
  };
}
