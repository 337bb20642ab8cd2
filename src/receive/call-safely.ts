/**
 * Calls a user's callback whose outcome nobody waits for: its throw or
 * rejection is dropped, so it can neither take the process down as an
 * unhandled rejection nor change an answer already decided.
 */
export function callSafely<A extends unknown[]>(callback: (...args: A) => unknown, ...args: A): void {
  try {
    const result = callback(...args);
    if (isThenable(result)) result.then(undefined, () => undefined);
  } catch {
    // Dropped on purpose: see above.
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (typeof value === 'object' || typeof value === 'function') && value !== null && typeof (value as PromiseLike<unknown>).then === 'function';
}
