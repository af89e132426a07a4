/**
 * The faults in force on one station, and how they fire: the runtime side of the fault schema
 * (src/contract/fault-schema.ts), which says what a fault may be.
 */
import type { Random } from './random.js';
import type { Fault, FaultKind, FaultSpec } from '../contract/fault-schema.js';

/** Faults of one station. */
export class FaultSet {
  readonly #faults: Fault[] = [];
  #nextId = 1;

  add(spec: FaultSpec): Fault {
    const fault: Fault = { ...spec, id: `f${this.#nextId++}` };
    this.#faults.push(fault);
    return fault;
  }

  remove(id: string): boolean {
    const index = this.#faults.findIndex((fault) => fault.id === id);
    if (index >= 0) this.#faults.splice(index, 1);
    return index >= 0;
  }

  clear(): void {
    this.#faults.length = 0;
  }

  list(): Fault[] {
    return this.#faults.map((fault) => ({ ...fault }));
  }

  /** No fault at all: the usual case, checked before anything else on the hot path. */
  get empty(): boolean {
    return this.#faults.length === 0;
  }

  /**
   * The first fault of `kind` that fires for this command, if any; a counted fault is used up by
   * firing. Faults for another lock never fire.
   */
  take(kind: FaultKind, lockId: string | undefined, random: Random): Fault | undefined {
    for (const fault of this.#faults) {
      if (fault.kind !== kind) continue;
      // A fault for one lock applies to that lock's commands and messages only, not to the station's status.
      if (fault.lockId !== undefined && fault.lockId !== lockId) continue;
      // Probability drawn in parts per million from the seeded source, so runs repeat with the seed.
      if (fault.probability !== undefined && random.int(0, 999_999) >= fault.probability * 1_000_000) continue;
      if (fault.count !== undefined) {
        fault.count -= 1;
        if (fault.count === 0) this.remove(fault.id);
      }
      return { ...fault };
    }
    return undefined;
  }

  /** A standing fault of `kind` (for output faults such as latency), without using it up. */
  peek(kind: FaultKind): Fault | undefined {
    return this.#faults.find((fault) => fault.kind === kind);
  }
}
