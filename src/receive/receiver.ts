/**
 * The receiver's own steps of a delivery: verify it, and claim its event in
 * the dedup store, answering a duplicate, one in progress or a failing store
 * itself. Checks the options of both once, at creation.
 */
import { checkLogger, type WebhookLogger } from '../base/logger.js';
import { DeadlineQueue } from '../base/deadlines.js';
import { isThenable } from '../base/user-code.js';
import { checkDuration, checkPolicy, checkRenamed, MAX_TIMER_MS } from '../base/option-checks.js';
import type { WebhookDelivery } from '../core/delivery.js';
import { WebhookDedupError } from '../core/errors.js';
import { readHeader, type WebhookHeaders } from '../core/headers.js';
import { resolveVerifyOptions, type VerifyOptions } from '../core/options.js';
import type { WebhookPayload } from '../core/payload.js';
import type { SecretLookupOptions, SecretResolver } from '../core/secret-lookup.js';
import type { WebhookSecret } from '../core/secret.js';
import { parseSeconds } from '../core/timestamp.js';
import { Webhook } from '../core/webhook.js';
import { checkClaimOptions, claimKey, claimSettings, type ClaimAttempt, type ClaimSettings, type Settle } from '../process/claim.js';
import { storeErrorLog, storeErrorReporter, type StoreErrorCallback } from '../process/store-failures.js';
import { isDedupStore, type DedupStore } from '../stores/dedup-store.js';
import { MemoryDedupStore } from '../stores/memory-dedup-store.js';
import type { BodyLimits } from './body-limits.js';
import { duplicate, refused, RETRY_SOON, type DecidedResponse } from './responses.js';
import { createTenantVerify, type TenantVerify, type Verification } from './tenants.js';
import { WebhookOptionsError } from '../base/options-error.js';

/** What to do when the dedup store fails before the user's code runs. */
export type DedupUnavailablePolicy = 'reject' | 'process';

/** Options every entry takes: the verifier's, the tenant's secret lookup, and exactly-once processing. */
export interface ReceiverOptions extends VerifyOptions, SecretLookupOptions {
  /**
   * The endpoint's signing secret, or several during a rotation. Required.
   * With the entry's `tenant` option it is instead a `SecretResolver`, a
   * function from the tenant to its secret (or `undefined` for an unknown
   * tenant), looked up only for requests that pass every check that needs
   * no secret, and cached per `secretCacheMs`, `secretLookupTimeoutMs` and
   * `secretCacheSize`.
   */
  readonly secret: WebhookSecret | SecretResolver;
  /**
   * Where to record processed deliveries (by their `dedupKey`), so a retry
   * or a replay of a processed event does not reach the handler again.
   * `false` turns this off: every verified delivery then reaches the handler.
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
   * How long a delivery holds its claim while the user's code runs. Longer
   * than the sender's 10 s answer window, so a slow handler is not run twice.
   * The lease is renewed while the code runs; it is also how long a retry
   * waits for the event after the process holding it died.
   * @default 60000
   */
  readonly leaseMs?: number;
  /**
   * The longest a delivery holds its claim, renewals included: renewal
   * stops this long after the claim, so a route that never ends its
   * response leaves its event to the sender's retries (which go on for
   * about three days). Code that runs longer may be run again by a retry.
   * At least `leaseMs`.
   * @default 600000 (ten minutes), or `leaseMs` if that is longer
   */
  readonly maxClaimMs?: number;
  /**
   * How long a processed delivery is remembered. Longer than the sender's
   * retry window of about three days.
   * @default 345600000 (four days)
   */
  readonly retentionMs?: number;
  /**
   * What to do when the dedup store fails before the user's code runs:
   * `'reject'` answers 503 `dedup_unavailable` so the sender retries later;
   * `'process'` runs the code without deduplication (an event may then be
   * processed twice).
   * @default 'reject'
   */
  readonly dedupUnavailable?: DedupUnavailablePolicy;
  /**
   * Told about every store failure, with the operation and the dedup key: a
   * `begin` that failed (the request is answered 503 `dedup_unavailable`,
   * whose `cause` is the same error), and a `complete` or `release` after
   * the code ran, or a `renew` while it runs, that still failed when the
   * lease was about to end; with `tenant`, a `lookup` of a secret that
   * failed (answered 503 `secret_unavailable`). Awaited; what it throws is
   * logged and changes nothing.
   * @default logs one line to `logger` naming the store's error and, where the cause is known, what to do; at most one line per store per 5 s while it stays down
   */
  readonly onStoreError?: StoreErrorCallback;
  /**
   * Where the lines about what went wrong go (a failing store or secret
   * lookup, a handler that threw, a queue that did not record an event, an
   * `onError` that failed), each with fields to filter on
   * (`WebhookLogFields`: code, operation, id, type, tenant, keyId, the
   * error's class and, but for a handler's, its message), never a secret, a
   * signature or a body. A pino logger serves as it is.
   * @default one sentence per line on `console.error`
   */
  readonly logger?: WebhookLogger;
}

/** Options of 0.x by the name they have now: a caller that still gives one is told, not ignored. */
const RENAMED = {
  onDedupError: "dedupUnavailable ('reject' or 'process')",
  onUnknown: "unknownEvents ('accept' or 'reject') or onUnknownEvent (a handler)",
} as const;

/**
 * What claiming a delivery's event leads to: the `Settle` of a claim held,
 * `undefined` to run without one (no store, or `dedupUnavailable: 'process'`),
 * or the answer to send instead of running anything.
 */
export type ClaimOutcome = Settle | undefined | DecidedResponse;

/** The receiver's steps, built once. */
export interface Receiver {
  /** What the entry's body reader enforces. */
  readonly limits: BodyLimits;
  /**
   * Verifies a delivery, reading its tenant with `tenantOf` where the
   * receiver serves many: the delivery, or the refusal to answer. Never
   * throws nor rejects; at once unless a tenant's secret is looked up.
   */
  verify(payload: WebhookPayload, headers: WebhookHeaders, tenantOf: () => unknown): Verification | Promise<Verification>;
  /** The receiver's clock minus the request's `webhook-timestamp`, in milliseconds, when that parses; else `undefined`. */
  skewMsOf(headers: WebhookHeaders): number | undefined;
  /**
   * Claims the delivery's event: at once without a store, else once the
   * store answered. Never rejects: a failing store is an answer (503) and a report.
   */
  claim(delivery: WebhookDelivery): ClaimOutcome | Promise<ClaimOutcome>;
  /** Where the receiver's lines go: the `logger` option, checked, or the console. */
  readonly logger: WebhookLogger;
  /** The receiver's clock, in milliseconds: the `now` option, or `Date.now`. */
  readonly now: () => number;
}

/**
 * Builds the receiver's steps; `tenant` is the entry's option of that name,
 * typed by each entry for its own request. Checks the options once; throws
 * `WebhookOptionsError`.
 */
export function createReceiver(options: ReceiverOptions & { readonly tenant?: unknown }): Receiver {
  if (options === null || typeof options !== 'object') {
    throw new WebhookOptionsError('svc-webhooks: options with a secret are required');
  }
  checkRenamed(options, RENAMED);
  const { secret, bodyTimeoutMs = 10_000 } = options;
  const verifyOptions = resolveVerifyOptions(options);
  const { maxPayloadBytes, now } = verifyOptions;
  checkDuration('bodyTimeoutMs', bodyTimeoutMs, MAX_TIMER_MS);
  const durations = checkClaimOptions(options, 600_000);
  const dedupUnavailable = checkPolicy('dedupUnavailable', options.dedupUnavailable, ['reject', 'process'] as const) ?? 'reject';
  if (options.tenant !== undefined && typeof options.tenant !== 'function') {
    throw new WebhookOptionsError('svc-webhooks: tenant must be a function from the request to the tenant');
  }
  if (options.tenant === undefined && typeof secret === 'function') {
    throw new WebhookOptionsError('svc-webhooks: a secret looked up per tenant needs the tenant option, which reads the tenant from the request');
  }
  if (options.tenant !== undefined && typeof secret !== 'function') {
    throw new WebhookOptionsError(
      'svc-webhooks: with the tenant option, secret must be a function from the tenant to its secret: a secret shared by every ' +
        'tenant proves nothing about the tenant a request names, so any request could name any tenant',
    );
  }
  const dedup = options.dedup === undefined ? new MemoryDedupStore({ now }) : options.dedup === false ? undefined : options.dedup;
  if (dedup !== undefined && !isDedupStore(dedup)) {
    throw new WebhookOptionsError('svc-webhooks: dedup must be a DedupStore (begin, complete, release and renew) or false');
  }
  // The secret resolver's failures get a log of their own, so a failing dedup store cannot quiet them.
  const logger = checkLogger(options.logger);
  const storeLog = storeErrorLog(dedup ?? options, undefined, logger);
  const lookupLog = storeErrorLog(typeof secret === 'function' ? secret : verifyOptions, undefined, logger);
  const onStoreError = options.onStoreError ?? ((error, context) => (context.operation === 'lookup' ? lookupLog : storeLog)(error, context));
  const report = storeErrorReporter(onStoreError, logger);
  const verify: TenantVerify =
    typeof secret === 'function' ? createTenantVerify(secret, options, verifyOptions, report) : verifierOf(new Webhook(secret, options));
  const claim = dedup === undefined ? undefined : claimFrom(claimSettings(dedup, durations, report));
  const inProgressHeaders = Object.freeze({ 'retry-after': String(Math.ceil(durations.leaseMs / 1000)) });

  return {
    limits: { maxPayloadBytes, deadlines: new DeadlineQueue(bodyTimeoutMs) },
    verify,
    skewMsOf(headers) {
      const timestamp = parseSeconds(readHeader(headers, 'webhook-timestamp', ', '));
      return timestamp === undefined ? undefined : now() - timestamp * 1000;
    },
    claim: claim ?? (() => undefined),
    logger,
    now,
  };

  /** Claims on the store: a duplicate, one in progress and a failing store are answers. */
  function claimFrom(settings: ClaimSettings) {
    const outcomeOf = (attempt: ClaimAttempt): ClaimOutcome => {
      switch (attempt.state) {
        case 'claimed':
          return attempt.settle;
        case 'done':
          return duplicate();
        case 'in_progress':
          return refused(new WebhookDedupError('delivery_in_progress', 'this event is being processed; retry later'), inProgressHeaders);
        case 'unavailable':
          if (dedupUnavailable === 'process') return undefined;
          return refused(
            new WebhookDedupError('dedup_unavailable', 'the dedup store is unavailable; retry later', { cause: attempt.error }),
            RETRY_SOON,
          );
      }
    };
    // A claim answered at once is answered at once; otherwise a reaction, not an async function awaiting it.
    return ({ dedupKey, tenant }: WebhookDelivery): ClaimOutcome | Promise<ClaimOutcome> => {
      const attempt = claimKey(settings, dedupKey, tenant);
      return isThenable(attempt) ? attempt.then(outcomeOf) : outcomeOf(attempt);
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
