/**
 * The user's `onError`, which every adapter takes: checked at creation, and
 * run so that nothing it does takes the process down or holds a request.
 */
import { checkCallback, checkDuration, MAX_TIMER_MS } from '../core/option-checks.js';
import { beforeDeadline } from './deadline.js';
import { reasonOf } from './error-reason.js';

/** The options every adapter adds to the receiver's for its `onError`. */
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
 * Runs `call`, a user's `onError`, then waits for `answered(value)` where the
 * answer is made on the side (a Node response ending). Resolves to
 * `{ value }` if both finished within `timeoutMs`; otherwise, when `call`
 * threw, rejected or ran out of time, to `undefined`, after one line on
 * `console.error`, and the adapter sends the default answer. Never rejects,
 * and a failure after the deadline is caught and reported too.
 */
export async function runOnError<T>(
  call: () => T | PromiseLike<T>,
  timeoutMs: number,
  answered: (value: T) => PromiseLike<unknown> | undefined = () => undefined,
): Promise<{ readonly value: T } | undefined> {
  const outcome = (async () => {
    const value = await call();
    await answered(value);
    return { value };
  })().catch((error: unknown) => report(`failed (${reasonOf(error)})`));
  return beforeDeadline(outcome, timeoutMs, () => report(`did not answer within ${timeoutMs} ms`));
}

function report(what: string): undefined {
  console.error(`svc-webhooks: onError ${what}; a request it left unanswered gets the default answer`);
  return undefined;
}
