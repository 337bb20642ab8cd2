/**
 * Calling the user's code safely: whatever a callback throws or rejects
 * with, the process stays up and no answer changes, and anything thrown can
 * be named in a log line.
 */

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

/** A printable reason for anything thrown, for one log line; even a value whose `message` or `toString` throws. */
export function reasonOf(error: unknown): string {
  try {
    return error instanceof Error ? error.message : String(error);
  } catch {
    return 'an unprintable value';
  }
}

/** The class name of anything thrown, for a log line that must not quote its message: `TypeError`, or `string` for a thrown string. */
export function kindOf(error: unknown): string {
  return error instanceof Error ? error.name : typeof error;
}

/** Whether `value` is a promise or another thenable, to be awaited; a plain value is used without a turn of the event loop. */
export function isThenable<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}

/**
 * `onValue` of `value`: at once when it is at hand, else once it settles, with `onRejected` taking a rejection
 * (without it, the rejection is passed on). The one way the request path takes a value or a promise of one: an
 * answer at hand costs no turn of the event loop, and a thenable, a user's included, is adopted as `await`
 * adopts it, one whose `then` throws too. Give it functions made once, not per call, on a path measured for speed.
 */
export function whenSettled<T, R, E = R>(value: T | PromiseLike<T>, onValue: (value: T) => R, onRejected?: (error: unknown) => E): R | E | Promise<Awaited<R | E>> {
  // then() flattens what the reactions answer, which its types do not say.
  return isThenable(value) ? (Promise.resolve(value).then(onValue, onRejected) as Promise<Awaited<R | E>>) : onValue(value);
}
