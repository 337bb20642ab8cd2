/** The error of a caller's mistake in the options or arguments of a call, thrown at once, before anything runs. */

// One symbol per process (Symbol.for), whichever copy of the package made the error.
const BRAND = Symbol.for('svc-webhooks.WebhookOptionsError');

/**
 * A mistake in the options or arguments a function of svc-webhooks was
 * called with: a missing secret, a duration that is no whole number of
 * milliseconds, a policy that is none of its values, an option given where it
 * means nothing. Thrown when the entry, store or worker is created (or the
 * function called), never while a request is answered. A `TypeError`, as
 * before it had a class of its own; `code` is always `'invalid_option'`, and
 * the message names the option and what it takes, never its value when it
 * may be a secret.
 *
 * `instanceof` holds for an error of any copy of svc-webhooks in the process,
 * as for `WebhookError`.
 *
 * @example
 * ```ts
 * try {
 *   new Webhook(process.env.WEBHOOK_SECRET ?? ''); // an empty secret is refused here
 * } catch (error) {
 *   if (error instanceof WebhookOptionsError) console.error(`${error.code}: ${error.message}`);
 *   throw error;
 * }
 * ```
 */
export class WebhookOptionsError extends TypeError {
  /** Always `'WebhookOptionsError'`. */
  override readonly name = 'WebhookOptionsError';
  /** Always `'invalid_option'`: the code to branch on. */
  readonly code = 'invalid_option';

  /** Whether `value` is a `WebhookOptionsError` of any copy of svc-webhooks. */
  static override [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === 'object' && value !== null && (value as { readonly [BRAND]?: unknown })[BRAND] === true;
  }

  /** `message` names the option and what it takes; `cause`, where there is one, what failed underneath. */
  constructor(message: string, options?: { readonly cause?: unknown }) {
    super(message, options);
    Object.defineProperty(this, BRAND, { value: true });
  }
}
