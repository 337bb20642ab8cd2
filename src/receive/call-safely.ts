/**
 * Calls a user's callback whose outcome nobody waits for: its throw or
 * rejection is dropped, so it can neither take the process down as an
 * unhandled rejection nor change an answer already decided.
 */
export function callSafely<A extends unknown[]>(callback: (...args: A) => unknown, ...args: A): void {
  try {
    // Promise.resolve adopts a promise or any other thenable, even one whose `then` throws, so every rejection lands here.
    Promise.resolve(callback(...args)).catch(() => undefined);
  } catch {
    // Dropped on purpose: see above.
  }
}
