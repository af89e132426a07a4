/**
 * The embedded broker's refusals (docs/mqtt-security.md, "The embedded broker, secured"): what
 * was refused, counted by kind and handed on at a bounded rate.
 */
export type RefusalKind = 'connect' | 'publish' | 'subscribe' | 'packet-too-large';
export const REFUSAL_KINDS: readonly RefusalKind[] = ['connect', 'publish', 'subscribe', 'packet-too-large'];

/** One refusal as reported: never a password, and never a user name that did not resolve (it may be a mistyped password). */
export interface BrokerRefusal {
  kind: RefusalKind;
  /** The identity, when it was established (`station:ST-1`, `service`, `observer`, …). */
  identity?: string;
  clientId?: string;
  topic?: string;
  reason: string;
  /** When, ISO 8601. */
  at: string;
}
export type RefusalCounts = Record<RefusalKind, number>;

/**
 * Counts refusals and hands them on, at most `perSecond` a second (each carries the counts so
 * far), so that a flood of refusals cannot flood whoever listens. Refusals held back are counted
 * and the counts catch up within a second.
 */
export class RefusalLog {
  readonly counts: RefusalCounts = { connect: 0, publish: 0, subscribe: 0, 'packet-too-large': 0 };
  readonly #emit: (refusal: BrokerRefusal, counts: RefusalCounts) => void;
  readonly #perSecond: number;
  #windowStart = 0;
  #inWindow = 0;
  #held: BrokerRefusal | undefined;
  #timer: NodeJS.Timeout | undefined;

  constructor(emit: (refusal: BrokerRefusal, counts: RefusalCounts) => void, perSecond = 20) {
    this.#emit = emit;
    this.#perSecond = perSecond;
  }

  add(refusal: Omit<BrokerRefusal, 'at'>): void {
    this.counts[refusal.kind]++;
    const now = Date.now();
    if (now - this.#windowStart >= 1000) {
      this.#windowStart = now;
      this.#inWindow = 0;
    }
    const full: BrokerRefusal = { ...clip(refusal), at: new Date(now).toISOString() };
    if (this.#inWindow < this.#perSecond) {
      this.#inWindow++;
      this.#emit(full, { ...this.counts });
      return;
    }
    // Held back: the last one goes out when the window turns, with the counts by then.
    this.#held = full;
    this.#timer ??= setTimeout(() => {
      this.#timer = undefined;
      const held = this.#held;
      this.#held = undefined;
      this.#windowStart = Date.now();
      this.#inWindow = 1;
      if (held) this.#emit(held, { ...this.counts });
    }, 1000 - (now - this.#windowStart));
    this.#timer.unref?.();
  }

  stop(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}

function clip(refusal: Omit<BrokerRefusal, 'at'>): Omit<BrokerRefusal, 'at'> {
  const cut = (text: string | undefined) => (text === undefined || text.length <= 200 ? text : `${text.slice(0, 200)}…`);
  const out: Omit<BrokerRefusal, 'at'> = { kind: refusal.kind, reason: refusal.reason };
  if (refusal.identity !== undefined) out.identity = cut(refusal.identity)!;
  if (refusal.clientId !== undefined) out.clientId = cut(refusal.clientId)!;
  if (refusal.topic !== undefined) out.topic = cut(refusal.topic)!;
  return out;
}

