/**
 * What a user's listener or callback throws is its own failure: thrown again on a later microtask
 * (an uncaught exception, as from any event listener), so that the code that called it (a packet
 * reader, a batch of many connections) finishes its work and is not taken for the culprit.
 */
export function throwLater(error: unknown): void {
  queueMicrotask(() => {
    throw error;
  });
}

/** Runs `call`; what it throws goes to `throwLater`. */
export function callSafely(call: () => void): void {
  try {
    call();
  } catch (error) {
    throwLater(error);
  }
}
