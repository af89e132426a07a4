/**
 * Faults a station can be told to have (docs/control-plane.md, "Fault"). A fault applies to every
 * command, to each with a probability drawn from the station's seeded random source, or to the
 * next `count` commands; it can be limited to one lock.
 */
import { Kind, Type, TypeRegistry, type Static } from '@sinclair/typebox';
import type { Random } from './random.js';

export const FAULT_KINDS = ['dropCommands', 'delayAcks', 'reject', 'ackNoOpen', 'duplicateState', 'latency'] as const;

export type FaultKind = (typeof FAULT_KINDS)[number];
/** TypeBox's own checker (topics.ts compiles the control messages) is told what the enum means. */
const FAULT_KIND = 'FaultKind';
if (!TypeRegistry.Has(FAULT_KIND)) TypeRegistry.Set(FAULT_KIND, (_schema, value) => (FAULT_KINDS as readonly unknown[]).includes(value));
/** Kinds that wait: without a `delayMs` they would do nothing. */
const DELAYING_KINDS: FaultKind[] = ['delayAcks', 'latency'];

export const FaultSpecSchema = Type.Object(
  {
    // An enum rather than a union of constants, so a wrong kind is answered with the list of kinds.
    kind: Type.Unsafe<FaultKind>({ [Kind]: FAULT_KIND, type: 'string', enum: [...FAULT_KINDS] }),
    lockId: Type.Optional(Type.String({ minLength: 1 })),
    probability: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    count: Type.Optional(Type.Integer({ minimum: 1 })),
    delayMs: Type.Optional(Type.Integer({ minimum: 0, maximum: 600_000 })),
    reason: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  },
  { additionalProperties: false, if: { properties: { kind: { enum: DELAYING_KINDS } } }, then: { properties: { delayMs: { type: 'integer' } }, required: ['delayMs'] } },
);

/** A fault as asked for. */
export type FaultSpec = Static<typeof FaultSpecSchema>;
/** A fault in force, with its id and what is left of its count. */
export type Fault = FaultSpec & { id: string };

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
