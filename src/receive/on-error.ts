/**
 * The user's `onError`, which answers a refused request in place of the
 * default JSON answer: whatever it throws, rejects with or fails to answer
 * in time, the request still gets the default answer, and one log line says
 * why.
 */
import { beforeDeadline } from '../base/deadlines.js';
import { checkCallback, checkDuration, MAX_TIMER_MS } from '../base/option-checks.js';
import { CONSOLE_LINES, errorFields, writeLog, type WebhookLogFields, type WebhookLogger } from '../base/logger.js';
import { reasonOf } from '../base/user-code.js';

/** The options every entry adds for its `onError`. */
export interface OnErrorOptions {
  /**
   * How long, in milliseconds, `onError` has to answer a refused request.
   * Past it, or when `onError` throws or rejects, the request gets the
   * default JSON answer instead and one line goes to the entry's `logger`.
   * @default 5000 (half the sender's 10 s answer window)
   */
  readonly onErrorTimeoutMs?: number;
}

/** Checks `onError` and `onErrorTimeoutMs` once; answers the deadline. Throws `WebhookOptionsError`. */
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
 * to `logger` with the fields `about` (the request's id, the event's type),
 * and the entry sends the default answer. Never rejects, and a failure after
 * the deadline is caught and reported too.
 */
export async function runOnError<T>(
  answer: () => PromiseLike<T>,
  timeoutMs: number,
  logger: WebhookLogger = CONSOLE_LINES,
  about: Pick<WebhookLogFields, 'id' | 'type'> = {},
): Promise<{ readonly value: T } | undefined> {
  const report = (what: string, fields: Omit<WebhookLogFields, 'code'>): undefined => {
    writeLog(logger, 'error', { code: 'on_error_failed', ...about, ...fields }, `onError ${what}; a request it left unanswered gets the default answer`);
    return undefined;
  };
  const outcome = (async () => ({ value: await answer() }))().catch((error: unknown) => report(`failed (${reasonOf(error)})`, errorFields(error, true)));
  return beforeDeadline(outcome, timeoutMs, () => report(`did not answer within ${timeoutMs} ms`, {}));
}
