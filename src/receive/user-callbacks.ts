/**
 * Calling the user's callbacks: whatever they throw, reject with or fail to
 * answer, the process stays up, no request hangs, and the failure is heard
 * in one log line.
 */
import { checkCallback, checkDuration, MAX_TIMER_MS } from '../core/option-checks.js';
import { beforeDeadline } from './deadlines.js';

/** The options every entry adds for its `onError`. */
export interface OnErrorOptions {
  /**
   * How long, in milliseconds, `onError` has to answer a refused request.
   * Past it, or when `onError` throws or rejects, the request gets the
   * default JSON answer instead and one line goes to `console.error`.
   * @default 5000 (half the sender's 10 s answer window)
   */
  readonly onErrorTimeoutMs?: number;
}

/** Checks `onError` and `onErrorTimeoutMs` once; answers the deadline. Throws `TypeError`. */
export function checkOnErrorOptions(options: OnErrorOptions & { readonly onError?: unknown }): number {
  const { onError, onErrorTimeoutMs = 5000 } = options;
  checkCallback('onError', onError);
  checkDuration('onErrorTimeoutMs', onErrorTimeoutMs, MAX_TIMER_MS);
  return onErrorTimeoutMs;
}

/**
 * Runs `answer`, which calls the user's `onError` and resolves once it has
 * answered. Resolves to `{ value }` if it did within `timeoutMs`; otherwise,
 * when it threw, rejected or ran out of time, to `undefined`, after one line
 * on `console.error`, and the entry sends the default answer. Never rejects,
 * and a failure after the deadline is caught and reported too.
 */
export async function runOnError<T>(answer: () => PromiseLike<T>, timeoutMs: number): Promise<{ readonly value: T } | undefined> {
  const outcome = (async () => ({ value: await answer() }))().catch((error: unknown) => reportOnError(`failed (${reasonOf(error)})`));
  return beforeDeadline(outcome, timeoutMs, () => reportOnError(`did not answer within ${timeoutMs} ms`));
}

function reportOnError(what: string): undefined {
  console.error(`svc-webhooks: onError ${what}; a request it left unanswered gets the default answer`);
  return undefined;
}

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

/** Whether `value` is a promise or another thenable, to be awaited; a plain value is used without a turn of the event loop. */
export function isThenable<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}
