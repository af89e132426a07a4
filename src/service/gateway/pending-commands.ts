/**
 * Unlock commands waiting for their ack. Each wait ends exactly once: by its ack, by its timeout,
 * or by `cancelAll`; its timer is cleared and its entry removed in every case, so no wait outlives
 * its timeout and the map never grows with abandoned commands.
 */
import type { AckPayload } from '../../contract/payloads.js';

/** Timer functions, injectable so unit tests can run in fake time. */
export interface CommandTimers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** `refused`: the broker would not take the command (an MQTT 5 PUBACK reason code of 0x80 or more). */
export type CommandResult = { kind: 'ack'; ack: AckPayload } | { kind: 'timeout' } | { kind: 'cancelled' } | { kind: 'refused'; reasonCode: number; reason: string };

interface Pending {
  token: string;
  lockId: string;
  timer: unknown;
  settle(result: CommandResult): void;
}

/** How many answered command ids are remembered, to tell a repeated ack from one nobody asked for. */
const ANSWERED_MEMORY = 1024;

/** What became of an ack: it settled a wait, repeats one already answered, or answers nothing sent. */
export type AckDelivery = 'settled' | 'duplicate' | 'unexpected';

/** The process's own timers, where none are given. */
export const GLOBAL_TIMERS: CommandTimers = {
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

export class PendingCommands {
  readonly #pending = new Map<string, Pending>();
  /** Recently answered command ids (insertion order, oldest first), bounded by ANSWERED_MEMORY. */
  readonly #answered = new Set<string>();
  readonly #timers: CommandTimers;

  constructor(timers?: CommandTimers) {
    this.#timers = timers ?? GLOBAL_TIMERS;
  }

  /** Number of commands still waiting. */
  get size(): number {
    return this.#pending.size;
  }

  /** Starts waiting for the ack of `commandId`, sent to `lockId` of station `token`. */
  wait(commandId: string, target: { token: string; lockId: string }, timeoutMs: number): Promise<CommandResult> {
    return new Promise<CommandResult>((resolve) => {
      const entry: Pending = {
        token: target.token,
        lockId: target.lockId,
        timer: undefined,
        settle: (result) => {
          this.#timers.clearTimeout(entry.timer);
          this.#pending.delete(commandId);
          resolve(result);
        },
      };
      entry.timer = this.#timers.setTimeout(() => entry.settle({ kind: 'timeout' }), timeoutMs);
      this.#pending.set(commandId, entry);
    });
  }

  /**
   * Delivers an ack that arrived on station `token`'s ack topic. It settles a wait only for a
   * command this gateway sent to that station and lock, once: a second ack of the same command
   * (a QoS 1 redelivery, DESIGN.md, or a contradicting one from someone else) is `duplicate`; an
   * ack naming a command nobody waits for, another station's command or another lock (which must
   * not settle someone else's wait) is `unexpected`.
   */
  settle(token: string, ack: AckPayload): AckDelivery {
    const entry = this.#pending.get(ack.commandId);
    if (!entry || entry.token !== token || entry.lockId !== ack.lockId) return this.#answered.has(ack.commandId) ? 'duplicate' : 'unexpected';
    entry.settle({ kind: 'ack', ack });
    this.#answered.add(ack.commandId);
    if (this.#answered.size > ANSWERED_MEMORY) this.#answered.delete(this.#answered.values().next().value!);
    return 'settled';
  }

  /**
   * Ends the wait of `commandId` because the broker refused the command: a PUBACK reason code of
   * 0x80 or more means it was not delivered to anyone (MQTT 5.0, section 3.4.2.1), so no ack will come.
   */
  refuse(commandId: string, reasonCode: number, reason: string): void {
    this.#pending.get(commandId)?.settle({ kind: 'refused', reasonCode, reason });
  }

  /** Ends every wait at once, for shutdown. */
  cancelAll(): void {
    for (const entry of [...this.#pending.values()]) entry.settle({ kind: 'cancelled' });
  }
}
