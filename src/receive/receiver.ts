import { checkCallback, checkDuration, MAX_TIMER_MS } from '../core/option-checks.js';
import type { BeginResult, DedupStore } from '../stores/dedup-store.js';
import { MemoryDedupStore } from '../stores/memory-dedup-store.js';
import { WebhookVerificationError } from '../core/errors.js';
import type { WebhookHeaders } from '../core/headers.js';
import { resolveVerifyOptions, type VerifyOptions } from '../core/options.js';
import type { WebhookPayload } from '../core/payload.js';
import type { WebhookSecret } from '../core/secret.js';
import type { VerifiedDelivery } from '../core/verify-delivery.js';
import { Webhook } from '../core/webhook.js';
import { holdClaim } from './settle-claim.js';
import { logStoreError, type StoreErrorCallback } from './store-error-report.js';

/** Options shared by every adapter: the verifier's, plus exactly-once processing. */
export interface ReceiverOptions extends VerifyOptions {
  /** The endpoint's signing secret, or several during a rotation. Required. */
  readonly secret: WebhookSecret;
  /**
   * Where to record processed event ids, so a retry or a replay of a
   * processed event does not reach the handler again. `false` turns this
   * off: every verified delivery then reaches the handler.
   * @default a `MemoryDedupStore` of this receiver's own (one process only)
   */
  readonly dedup?: DedupStore | false;
  /**
   * How long, in milliseconds, the whole body may take to arrive. Past it the
   * request is answered 408 `body_timeout` and its connection closed, so a
   * sender that stalls mid-body does not hold the request. The service gives
   * up after 10 s anyway.
   * @default 10000
   */
  readonly bodyTimeoutMs?: number;
  /**
   * How long a delivery holds its claim while the handler runs. Longer than
   * the sender's 10 s answer window, so a slow handler is not run twice.
   * The lease is renewed while the route runs; it is also how long a retry
   * waits for the event after the process holding it died.
   * @default 60000
   */
  readonly leaseMs?: number;
  /**
   * The longest a delivery holds its claim, renewals included: renewal
   * stops this long after the claim, so a route that never ends its
   * response leaves its event to the sender's retries (which go on for
   * about three days). A route that runs longer may be run again by a retry.
   * At least `leaseMs`.
   * @default 600000 (ten minutes), or `leaseMs` if that is longer
   */
  readonly maxClaimMs?: number;
  /**
   * How long a processed id is remembered. Longer than the sender's retry
   * window of about three days.
   * @default 345600000 (four days)
   */
  readonly retentionMs?: number;
  /**
   * What to do when the dedup store fails before the handler runs: `'reject'`
   * answers 503 so the sender retries later; `'process'` runs the handler
   * without deduplication (an event may then be processed twice).
   * @default 'reject'
   */
  readonly onDedupError?: 'reject' | 'process';
  /**
   * Told about a store failure that no response can carry any more: a
   * `complete` or `release` after the handler ran, or a `renew` while it
   * runs, that still failed when the lease was about to end. Awaited; what
   * it throws is logged and changes nothing.
   * @default logs one line with console.error
   */
  readonly onStoreError?: StoreErrorCallback;
}

/** A response the adapter sends: `body` as JSON, or no body when it is `undefined` (a handler's 204). */
export interface WebhookResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: unknown;
}

/** What the adapter does with a request. */
export type Reception =
  /**
   * Run the route. `settle` is present when a dedup claim waits for the
   * outcome: call it with the status the route answered. It never rejects
   * and may take up to a lease while the store fails, so do not hold the
   * response for it.
   */
  | { readonly action: 'process'; readonly delivery: VerifiedDelivery; readonly settle?: (status: number) => Promise<void> }
  /**
   * Answer this and do not run the route. `error` is set when the request is
   * refused, so an adapter can hand it to a user's own error response.
   */
  | { readonly action: 'respond'; readonly response: WebhookResponse; readonly error?: WebhookVerificationError };

/** A delivery the receiver let through, with its dedup claim if any. */
export type ProcessReception = Extract<Reception, { readonly action: 'process' }>;

export interface Receiver {
  /** The body limit in force, for adapters that read the body themselves. */
  readonly maxPayloadBytes: number;
  /** The body read deadline in force, for the same adapters. */
  readonly bodyTimeoutMs: number;
  /** Verifies and claims a delivery. Never throws a `WebhookVerificationError`: it becomes a response. */
  receive(payload: WebhookPayload, headers: WebhookHeaders): Promise<Reception>;
}

/** Builds the request logic the adapters share. Checks options once; throws `TypeError`. */
export function createReceiver(options: ReceiverOptions): Receiver {
  if (options === null || typeof options !== 'object') {
    throw new TypeError('svc-webhooks: options with a secret are required');
  }
  const { secret, leaseMs = 60_000, retentionMs = 4 * 24 * 3600_000, onDedupError = 'reject' } = options;
  const { maxClaimMs = Math.max(600_000, leaseMs), onStoreError = logStoreError, bodyTimeoutMs = 10_000 } = options;
  const webhook = new Webhook(secret, options);
  const { maxPayloadBytes, now } = resolveVerifyOptions(options);
  const dedup = options.dedup === undefined ? new MemoryDedupStore({ now }) : options.dedup === false ? undefined : options.dedup;
  if (dedup !== undefined && !isDedupStore(dedup)) {
    throw new TypeError('svc-webhooks: dedup must be a DedupStore (begin, complete, release and renew) or false');
  }
  checkDuration('bodyTimeoutMs', bodyTimeoutMs, MAX_TIMER_MS);
  // Renewal sets a timer for a third of the lease.
  checkDuration('leaseMs', leaseMs, MAX_TIMER_MS);
  checkDuration('retentionMs', retentionMs);
  checkDuration('maxClaimMs', maxClaimMs);
  if (maxClaimMs < leaseMs) throw new TypeError('svc-webhooks: maxClaimMs must be at least leaseMs');
  if (onDedupError !== 'reject' && onDedupError !== 'process') {
    throw new TypeError("svc-webhooks: onDedupError must be 'reject' or 'process'");
  }
  checkCallback('onStoreError', onStoreError);
  const retryAfter = String(Math.ceil(leaseMs / 1000));

  return {
    maxPayloadBytes,
    bodyTimeoutMs,
    async receive(payload, headers) {
      let delivery: VerifiedDelivery;
      try {
        delivery = webhook.verifyDelivery(payload, headers);
      } catch (error) {
        return refusal(error);
      }
      if (dedup === undefined) return { action: 'process', delivery };

      let claim: unknown;
      const claimedAt = Date.now();
      try {
        claim = await dedup.begin(delivery.id, leaseMs);
      } catch {
        // A failing store is met below like one answering no known state.
      }
      if (!isBeginResult(claim)) {
        if (onDedupError === 'process') return { action: 'process', delivery };
        return refusal(new WebhookVerificationError('dedup_unavailable', 'the dedup store is unavailable; retry later'));
      }
      if (claim.state === 'done') {
        return { action: 'respond', response: { status: 200, headers: {}, body: { received: true, duplicate: true } } };
      }
      if (claim.state === 'in_progress') {
        const error = new WebhookVerificationError('delivery_in_progress', 'this event is being processed; retry later');
        return refusal(error, { 'retry-after': retryAfter });
      }
      const { token } = claim;
      const lease = { store: dedup, id: delivery.id, token, leaseMs, claimedAt, maxClaimMs };
      return { action: 'process', delivery, settle: holdClaim({ ...lease, retentionMs, onStoreError }) };
    },
  };
}

/**
 * The JSON response for a refused request: `{ error: { code, message } }`
 * with the error's status. Anything but a `WebhookVerificationError` is
 * re-thrown, since it is a bug rather than a bad request.
 */
export function errorResponse(error: unknown, headers: Readonly<Record<string, string>> = {}): WebhookResponse {
  if (!(error instanceof WebhookVerificationError)) throw error;
  return { status: error.status, headers, body: { error: { code: error.code, message: error.message } } };
}

function refusal(error: unknown, headers?: Readonly<Record<string, string>>): Reception {
  const response = errorResponse(error, headers);
  return { action: 'respond', response, error: error as WebhookVerificationError };
}

// A store is the caller's code: an answer it should never give must not read as a claim.
function isBeginResult(value: unknown): value is BeginResult {
  const result = value as Partial<{ state: unknown; token: unknown }> | null;
  if (typeof result !== 'object' || result === null) return false;
  if (result.state === 'claimed') return typeof result.token === 'string';
  return result.state === 'in_progress' || result.state === 'done';
}

function isDedupStore(value: unknown): value is DedupStore {
  const store = value as Partial<DedupStore> | null;
  return (
    typeof store === 'object' &&
    store !== null &&
    typeof store.begin === 'function' &&
    typeof store.complete === 'function' &&
    typeof store.release === 'function' &&
    typeof store.renew === 'function'
  );
}
