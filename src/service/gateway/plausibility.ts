/**
 * How the `/v1` gateway refuses what is implausible (the rules are src/mqtt/plausibility.ts): a
 * message that fails one is dropped, counted by reason and logged at most once per station per
 * minute, never with its payload.
 */
import { REFUSAL_REASONS, type RefusalReason } from '../../mqtt/plausibility.js';

export * from '../../mqtt/plausibility.js';

/** The counts by reason, and the rule that logs a refusal at most once per station per minute. */
export class RefusalCounter {
  readonly #counts = Object.fromEntries(REFUSAL_REASONS.map((reason) => [reason, 0])) as Record<RefusalReason, number>;
  /** When each station's refusals were last logged; keys are fixture tokens (plus one for unknown stations), so bounded by the fixture. */
  readonly #lastLogged = new Map<string, number>();
  readonly #now: () => number;
  readonly #log: (line: string) => void;

  constructor(options: { now: () => number; log: (line: string) => void }) {
    this.#now = options.now;
    this.#log = options.log;
  }

  /** Counts a refusal; `token` undefined for a station the fixture does not list. */
  refuse(reason: RefusalReason, token: string | undefined, what: string): void {
    this.#counts[reason] += 1;
    const key = token ?? '';
    const now = this.#now();
    const last = this.#lastLogged.get(key);
    if (last !== undefined && now - last < 60_000) return;
    this.#lastLogged.set(key, now);
    // Never the payload, and never the topic of an unknown station (anyone chose it): only what and why.
    this.#log(`refused ${what} ${token === undefined ? 'for a station the fixture does not list' : `of ${token}`} (${reason}); more of this station's refusals are counted, logged again in a minute at most`);
  }

  /** Refusals so far, by reason. */
  get counts(): Readonly<Record<RefusalReason, number>> {
    return { ...this.#counts };
  }

  get total(): number {
    let total = 0;
    for (const reason of REFUSAL_REASONS) total += this.#counts[reason];
    return total;
  }
}
