/**
 * The receiver's own steps of a delivery: verify it, and claim its event in
 * the dedup store, answering a duplicate, one in progress or a failing store
 * itself. Checks the options of both once, at creation.
 */
import { WebhookVerificationError } from '../core/errors.js';
import { readHeader, type WebhookHeaders } from '../core/headers.js';
import { checkDuration, MAX_TIMER_MS } from '../core/option-checks.js';
import { resolveVerifyOptions, type VerifyOptions } from '../core/options.js';
import type { WebhookPayload } from '../core/payload.js';
import type { SecretLookupOptions, SecretResolver } from '../core/secret-lookup.js';
import type { WebhookSecret } from '../core/secret.js';
import { parseSeconds } from '../core/timestamp.js';
import type { VerifiedDelivery } from '../core/verify-delivery.js';
import { Webhook } from '../core/webhook.js';
import { isDedupStore, type DedupStore } from '../stores/dedup-store.js';
import { MemoryDedupStore } from '../stores/memory-dedup-store.js';
import type { BodyLimits } from './body-limits.js';
import {
  checkClaimOptions,
  claimKey,
  claimSettings,
  storeErrorLog,
  storeErrorReporter,
  type ClaimSettings,
  type Settle,
  type StoreErrorCallback,
} from './claim.js';
import { DeadlineQueue } from './deadlines.js';
import { eventKey } from './event-key.js';
import { duplicate, refused, type DecidedResponse } from './responses.js';
import { createTenantVerify, type TenantVerify, type Verification } from './tenants.js';

/** Options shared by every adapter: the verifier's, plus exactly-once processing. */
export interface ReceiverOptions extends VerifyOptions, SecretLookupOptions {
  /**
   * The endpoint's signing secret, or several during a rotation. Required.
   * With the entry's `tenant` option, it may instead be a `SecretResolver`, a function from the
   * tenant to its secret (or `undefined` for an unknown tenant), looked up
   * only for requests that pass every check that needs no secret, and cached
   * per `secretCacheMs`, `secretLookupTimeoutMs` and `secretCacheSize`.
   */
  readonly secret: WebhookSecret | SecretResolver;
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
   * Told about every store failure, with the operation and the event id: a
   * `begin` that failed (the request is answered 503 `dedup_unavailable`,
   * whose `cause` is the same error), and a `complete` or `release` after
   * the handler ran, or a `renew` while it runs, that still failed when the
   * lease was about to end. Awaited; what it throws is logged and changes
   * nothing.
   * @default logs one line with console.error naming the store's error and, where the cause is known, what to do; at most one line per store per 5 s while it stays down
   */
  readonly onStoreError?: StoreErrorCallback;
}

/** `Retry-After`, in seconds, on a 503 for a failing store: soon, since a store is mostly back within seconds. */
export const STORE_RETRY_AFTER_SECONDS = 5;

/**
 * What claiming a delivery's event leads to: the `Settle` of a claim held,
 * `undefined` to run without one (no store, or `onDedupError: 'process'`),
 * or the answer to send instead of running anything.
 */
export type ClaimOutcome = Settle | undefined | DecidedResponse;

export interface Receiver {
  /** What the entry's body reader enforces. */
  readonly limits: BodyLimits;
  /**
   * Verifies a delivery, reading its tenant with `tenantOf` where the
   * receiver serves many: the delivery, or the refusal to answer. Never
   * throws nor rejects; at once unless a tenant's secret is looked up.
   */
  verify(payload: WebhookPayload, headers: WebhookHeaders, tenantOf: () => unknown): Verification | Promise<Verification>;
  /** `{ skewSeconds }`: the receiver's clock minus the request's `webhook-timestamp`, when that parses; else nothing. */
  skewOf(headers: WebhookHeaders): { readonly skewSeconds?: number };
  /**
   * Claims the delivery's event: at once without a store, else once the
   * store answered. Never rejects: a failing store is an answer (503) and a report.
   */
  claim(delivery: VerifiedDelivery): ClaimOutcome | Promise<ClaimOutcome>;
}

/**
 * Builds the receiver's steps; `tenant` is the entry's option of that name,
 * typed by each entry for its own request. Checks the options once; throws
 * `TypeError`.
 */
export function createReceiver(options: ReceiverOptions & { readonly tenant?: unknown }): Receiver {
  if (options === null || typeof options !== 'object') {
    throw new TypeError('svc-webhooks: options with a secret are required');
  }
  const { secret, onDedupError = 'reject', bodyTimeoutMs = 10_000 } = options;
  const verifyOptions = resolveVerifyOptions(options);
  const { maxPayloadBytes, now } = verifyOptions;
  const dedup = options.dedup === undefined ? new MemoryDedupStore({ now }) : options.dedup === false ? undefined : options.dedup;
  if (dedup !== undefined && !isDedupStore(dedup)) {
    throw new TypeError('svc-webhooks: dedup must be a DedupStore (begin, complete, release and renew) or false');
  }
  checkDuration('bodyTimeoutMs', bodyTimeoutMs, MAX_TIMER_MS);
  const durations = checkClaimOptions(options, 600_000);
  if (onDedupError !== 'reject' && onDedupError !== 'process') {
    throw new TypeError("svc-webhooks: onDedupError must be 'reject' or 'process'");
  }
  if (options.tenant !== undefined && typeof options.tenant !== 'function') {
    throw new TypeError('svc-webhooks: tenant must be a function from the request to the tenant');
  }
  if (options.tenant === undefined && typeof secret === 'function') {
    throw new TypeError('svc-webhooks: a secret looked up per tenant needs the tenant option, which reads the tenant from the request');
  }
  // The secret resolver's failures get a log of their own, so a failing dedup store cannot quiet them.
  const storeLog = storeErrorLog(dedup ?? options);
  const lookupLog = storeErrorLog(typeof secret === 'function' ? secret : verifyOptions);
  const report = storeErrorReporter(options.onStoreError ?? ((error, context) => (context.operation === 'lookup' ? lookupLog : storeLog)(error, context)));
  const verify: TenantVerify =
    options.tenant === undefined ? verifierOf(new Webhook(secret as WebhookSecret, options)) : createTenantVerify(secret, options, verifyOptions, report);
  const inProgressHeaders = { 'retry-after': String(Math.ceil(durations.leaseMs / 1000)) };
  const unavailableHeaders = { 'retry-after': String(STORE_RETRY_AFTER_SECONDS) };

  return {
    limits: { maxPayloadBytes, deadlines: new DeadlineQueue(bodyTimeoutMs) },
    verify,
    skewOf(headers) {
      const timestamp = parseSeconds(readHeader(headers, 'webhook-timestamp', ', '));
      return timestamp === undefined ? {} : { skewSeconds: now() / 1000 - timestamp };
    },
    claim: dedup === undefined ? () => undefined : claimFrom(claimSettings(dedup, durations, report)),
  };

  /** Claims on `dedup`: a duplicate, one in progress and a failing store are answers. */
  function claimFrom(settings: ClaimSettings) {
    return async ({ id, tenant }: VerifiedDelivery): Promise<ClaimOutcome> => {
      const attempt = await claimKey(settings, eventKey(id, tenant));
      switch (attempt.state) {
        case 'claimed':
          return attempt.settle;
        case 'done':
          return duplicate();
        case 'in_progress':
          return refused(new WebhookVerificationError('delivery_in_progress', 'this event is being processed; retry later'), inProgressHeaders);
        case 'unavailable':
          if (onDedupError === 'process') return undefined;
          return refused(
            new WebhookVerificationError('dedup_unavailable', 'the dedup store is unavailable; retry later', { cause: attempt.error }),
            unavailableHeaders,
          );
      }
    };
  }
}

/** The verify step of a receiver of one endpoint: the refusal of `webhook` as an answer. */
function verifierOf(webhook: Webhook): TenantVerify {
  return (payload, headers) => {
    try {
      return webhook.verifyDelivery(payload, headers);
    } catch (error) {
      return refused(error);
    }
  };
}
