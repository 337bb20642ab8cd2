/**
 * The one error type of svc-webhooks. `code` is stable and safe to branch
 * on; `status` is the HTTP status a receiver should answer with.
 * `verify()` throws only the first seven codes; `TenantWebhooks` adds
 * `unknown_tenant` and `secret_unavailable`; receivers add the others.
 */

/** Every code a `WebhookVerificationError` can carry, with its HTTP status. */
export const ERROR_STATUS = {
  /** A `webhook-id`, `webhook-timestamp` or `webhook-signature` header is absent or empty. */
  missing_header: 400,
  /** `webhook-timestamp` is not a plain integer of seconds. */
  invalid_timestamp: 400,
  /** The timestamp is older than the tolerance allows. */
  timestamp_too_old: 400,
  /** The timestamp is further in the future than the tolerance allows. */
  timestamp_too_new: 400,
  /** No `v1` signature matches any of the secrets. */
  invalid_signature: 400,
  /** Signed, but not a JSON event envelope whose `id` is the `webhook-id`. */
  invalid_payload: 400,
  /** The body is larger than `maxPayloadBytes`. */
  payload_too_large: 413,
  /** The tenant the request is for has no secret: the lookup found nothing (never 410, which would disable the endpoint). */
  unknown_tenant: 404,
  /** The tenant's secret could not be looked up (the lookup failed or timed out); the sender retries. */
  secret_unavailable: 503,
  /** The body did not arrive whole within `bodyTimeoutMs`. */
  body_timeout: 408,
  /** A body parser consumed the body before verification: a mounting mistake. */
  body_already_parsed: 500,
  /** Another delivery of this event holds a live lease; retry later. */
  delivery_in_progress: 409,
  /** The dedup store failed; the sender should retry so nothing is lost. */
  dedup_unavailable: 503,
  /** The queue given as `handoff` did not record the event; the sender retries. */
  handoff_failed: 503,
  /** A handler (given in `on`, or to the Fetch and Lambda entries) threw or rejected; the sender retries. The error itself is never sent. */
  handler_failed: 500,
  /** The event failed the schema given for its type; the sender retries. */
  invalid_event_data: 422,
  /** `onUnknown: 'reject'` refused an event of a type this version does not know. */
  unknown_event_type: 422,
} as const;

export type WebhookErrorCode = keyof typeof ERROR_STATUS;

// One symbol per process (Symbol.for), whichever copy of the package made the error.
const BRAND = Symbol.for('svc-webhooks.WebhookVerificationError');

export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
  readonly code: WebhookErrorCode;
  readonly status: number;

  /**
   * `instanceof` holds for an error of any copy of svc-webhooks in the
   * process: each entry point ships as one file with its own copy of this
   * class, and an app may load both the ES module and the CommonJS build.
   */
  static override [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === 'object' && value !== null && (value as { readonly [BRAND]?: unknown })[BRAND] === true;
  }

  /**
   * `message` must never include a secret, a signature or the body. `cause`
   * is what failed underneath (a store's error behind `dedup_unavailable`):
   * for the operator's logs, never sent to the sender.
   */
  constructor(code: WebhookErrorCode, message: string, options?: { readonly cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.status = ERROR_STATUS[code];
    Object.defineProperty(this, BRAND, { value: true });
  }
}
