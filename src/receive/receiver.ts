import { checkCallback, checkDuration } from '../core/option-checks.js';
import type { BeginResult, DedupStore } from '../stores/dedup-store.js';
import { WebhookVerificationError } from '../core/errors.js';
import type { WebhookHeaders } from '../core/headers.js';
import { resolveVerifyOptions, type VerifyOptions } from '../core/options.js';
import type { WebhookPayload } from '../core/payload.js';
import type { WebhookSecret } from '../core/secret.js';
import type { VerifiedDelivery } from '../core/verify-delivery.js';
import { Webhook } from '../core/webhook.js';

/** Options shared by every adapter: the verifier's, plus exactly-once processing. */
export interface ReceiverOptions extends VerifyOptions {
  /** The endpoint's signing secret, or several during a rotation. Required. */
  readonly secret: WebhookSecret;
  /**
   * Where to record processed event ids. Without one, every verified delivery
   * reaches the handler, retries included.
   * @default undefined (no deduplication)
   */
  readonly dedup?: DedupStore;
  /**
   * How long a delivery holds its claim while the handler runs. Longer than
   * the sender's 10 s answer window, so a slow handler is not run twice.
   * @default 60000
   */
  readonly leaseMs?: number;
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
   * Told about a store failure that no response can carry any more (a failed
   * `complete` or `release` after the handler ran).
   * @default logs one line with console.error
   */
  readonly onStoreError?: (error: unknown) => void;
}

/** A response the adapter sends as JSON. */
export interface WebhookResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: unknown;
}

/** What the adapter does with a request. */
export type Reception =
  /**
   * Run the route. `settle` is present when a dedup claim waits for the
   * outcome: call it once with the status the route answered.
   */
  | { readonly action: 'process'; readonly delivery: VerifiedDelivery; readonly settle?: (status: number) => Promise<void> }
  /**
   * Answer this and do not run the route. `error` is set when the request is
   * refused, so an adapter can hand it to a user's own error response.
   */
  | { readonly action: 'respond'; readonly response: WebhookResponse; readonly error?: WebhookVerificationError };

export interface Receiver {
  /** The body limit in force, for adapters that read the body themselves. */
  readonly maxPayloadBytes: number;
  /** Verifies and claims a delivery. Never throws a `WebhookVerificationError`: it becomes a response. */
  receive(payload: WebhookPayload, headers: WebhookHeaders): Promise<Reception>;
}

/** Builds the request logic the adapters share. Checks options once; throws `TypeError`. */
export function createReceiver(options: ReceiverOptions): Receiver {
  if (options === null || typeof options !== 'object') {
    throw new TypeError('svc-webhooks: options with a secret are required');
  }
  const { secret, dedup, leaseMs = 60_000, retentionMs = 4 * 24 * 3600_000, onDedupError = 'reject' } = options;
  const { onStoreError = defaultStoreErrorLog } = options;
  const webhook = new Webhook(secret, options);
  if (dedup !== undefined && !isDedupStore(dedup)) {
    throw new TypeError('svc-webhooks: dedup must be a DedupStore (begin, complete and release)');
  }
  checkDuration('leaseMs', leaseMs);
  checkDuration('retentionMs', retentionMs);
  if (onDedupError !== 'reject' && onDedupError !== 'process') {
    throw new TypeError("svc-webhooks: onDedupError must be 'reject' or 'process'");
  }
  checkCallback('onStoreError', onStoreError);
  const retryAfter = String(Math.ceil(leaseMs / 1000));

  return {
    maxPayloadBytes: resolveVerifyOptions(options).maxPayloadBytes,
    async receive(payload, headers) {
      let delivery: VerifiedDelivery;
      try {
        delivery = webhook.verifyDelivery(payload, headers);
      } catch (error) {
        return refusal(error);
      }
      if (dedup === undefined) return { action: 'process', delivery };

      let claim: BeginResult;
      try {
        claim = await dedup.begin(delivery.id, leaseMs);
        if (!isBeginResult(claim)) throw new TypeError('the dedup store answered begin() with no known state');
      } catch {
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
      return {
        action: 'process',
        delivery,
        settle: async (status) => {
          try {
            // Only a 2xx tells the sender to stop; anything else must leave the event to its retry.
            if (status >= 200 && status < 300) await dedup.complete(delivery.id, token, retentionMs);
            else await dedup.release(delivery.id, token);
          } catch (error) {
            onStoreError(error);
          }
        },
      };
    },
  };
}

/**
 * The JSON response for a refused request: `{ error: { code, message } }`
 * with the error's status. A 413 also closes the connection. Anything but a
 * `WebhookVerificationError` is re-thrown, since it is a bug rather than a
 * bad request.
 */
export function errorResponse(error: unknown, headers: Readonly<Record<string, string>> = {}): WebhookResponse {
  if (!(error instanceof WebhookVerificationError)) throw error;
  // The rest of a body past the limit is left unread: close the connection rather than drain it.
  const closing: Readonly<Record<string, string>> = error.code === 'payload_too_large' ? { connection: 'close' } : {};
  return { status: error.status, headers: { ...headers, ...closing }, body: { error: { code: error.code, message: error.message } } };
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
    typeof store.release === 'function'
  );
}

function defaultStoreErrorLog(error: unknown): void {
  const reason = error instanceof Error ? error.message : String(error);
  console.error(`svc-webhooks: the dedup store failed after the handler ran (${reason}); the lease will expire`);
}
