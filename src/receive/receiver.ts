/**
 * The receiver's own steps of a delivery: verify it, and claim its event in
 * the dedup store, answering a duplicate, one in progress or a failing store
 * itself. Checks the options of both once, at creation.
 */
import { checkLogger, type WebhookLogger } from '../base/logger.js';
import { DeadlineQueue } from '../base/deadlines.js';
import { whenSettled } from '../base/user-code.js';
import { checkCallback, checkDuration, checkOptionsObject, checkRenamed, MAX_TIMER_MS } from '../base/option-checks.js';
import type { WebhookDelivery } from '../core/delivery.js';
import { readHeader, type WebhookHeaders } from '../core/headers.js';
import { resolveVerifyOptions, type ResolvedVerifyOptions, type VerifyOptions } from '../core/options.js';
import type { WebhookPayload } from '../core/payload.js';
import type { DecodedKey, WebhookSecret } from '../core/secret.js';
import { cachedKeys } from '../core/key-cache.js';
import { verifyOnThisRuntime } from '../core/verify-delivery.js';
import { parseSeconds } from '../core/timestamp.js';
import { checkOrdering, type OrderingOptions } from '../core/event-order.js';
import { checkDedupObject } from '../process/claim.js';
import { dedupClaims, type ClaimOutcome, type DedupUnavailablePolicy } from './claim-answers.js';
import { storeErrorLog, storeErrorReporter, type StoreErrorCallback } from '../process/store-failures.js';
import type { DedupStore } from '../stores/dedup-store.js';
import { MemoryDedupStore } from '../stores/memory-dedup-store.js';
import type { BodyLimits } from './body-limits.js';
import { refused, type DecidedResponse } from './responses.js';
import { createTenantVerify, type TenantOf, type TenantsOptions, type TenantVerify, type Verification } from './tenants.js';
import { WebhookOptionsError } from '../base/options-error.js';


/** How an entry processes each event once: the dedup store, its claims, and what a failing store leads to. */
export interface DedupOptions {
  /**
   * Where to record processed deliveries (by their `dedupKey`), so a retry
   * or a replay of a processed event does not reach the handler again: a
   * `RedisDedupStore` or `PostgresDedupStore` where several processes serve
   * the endpoint.
   * @default a `MemoryDedupStore` of this receiver's own (one process only)
   */
  readonly store?: DedupStore;
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
   * At least `leaseMs`. Shorter than a queue worker's hour: the sender
   * stops waiting for the answer after 10 s, so work that runs for minutes
   * belongs in a queue (`handoff`), and a claim held much longer only keeps
   * the event from its retries.
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
   * What to do when the store fails before the user's code runs:
   * `'reject'` answers 503 `dedup_unavailable` so the sender retries later;
   * `'process'` runs the code without deduplication (an event may then be
   * processed twice).
   * @default 'reject'
   */
  readonly whenUnavailable?: DedupUnavailablePolicy;
  /**
   * Told about every failure of the store, with the operation, the dedup
   * key and the delivery's id and type: a `begin` that failed (the request
   * is answered 503 `dedup_unavailable`, whose `cause` is the same error), and a `complete`
   * or `release` after the code ran, or a `renew` while it runs, that still
   * failed when the lease was about to end. Awaited; what it throws is
   * logged and changes nothing.
   * @default logs one line to `logger` naming the store's error and, where the cause is known, what to do; at most one line per store per 5 s while it stays down
   */
  readonly onError?: StoreErrorCallback;
}

/** Options every entry takes besides its secret: the verifier's, exactly-once processing, the body's deadline and the log. */
export interface ReceiverOptions extends VerifyOptions {
  /**
   * How each event is processed once: the dedup store and its claims.
   * `false` turns this off: every verified delivery then reaches the
   * handler, and no other dedup option means anything.
   * @default {} (a `MemoryDedupStore` of this receiver's own, each option at its default)
   */
  readonly dedup?: DedupOptions | false;
  /**
   * Puts events about one object in order, in the dedup store's step:
   * events of one object (`key`) run one at a time (another is answered 409
   * `delivery_in_progress` meanwhile, and retried), and one older
   * (`version`) than one of its object processed before is stale: skipped
   * and answered 200 (outcome `stale`), or run with `delivery.stale` under
   * `staleEvents: 'run'`. Needs `dedup`, with a store that orders
   * (`MemoryDedupStore`, `RedisDedupStore`, `PostgresDedupStore`).
   * @default undefined (each event runs as it arrives)
   */
  readonly ordering?: OrderingOptions;
  /**
   * How long, in milliseconds, the whole body may take to arrive. Past it the
   * request is answered 408 `body_timeout` and its connection closed, so a
   * sender that stalls mid-body does not hold the request. The service gives
   * up after 10 s anyway.
   * @default 10000
   */
  readonly bodyTimeoutMs?: number;
  /**
   * Where the lines about what went wrong go (a failing store or secret
   * lookup, a handler that threw, a queue that did not record an event, an
   * `onError` that failed, a refused request: at most one line per refusal
   * code a minute, counting those left out), each with fields to filter on
   * (`WebhookLogFields`: code, operation, id, type, tenant, keyId, the
   * error's class and, but for a queue's, its message; what a handler threw
   * itself under `err`, for its stack), never a secret, a signature or a
   * body. A pino logger serves as it is.
   * @default one sentence per line on `console.error`
   */
  readonly logger?: WebhookLogger;
}

/** One endpoint with its own secret. */
export interface SingleEndpoint {
  /** The endpoint's signing secret, or several during a rotation. Required, unless `tenants` is given instead. */
  readonly secret: WebhookSecret;
  /** Not with `secret`: one endpoint has no tenants. */
  readonly tenants?: undefined;
}

/** Many tenants behind one route, each with its own secret; `R` is the entry's request. */
export interface TenantEndpoints<R> {
  /** Which tenant a request is for, and each tenant's secret, looked up and cached. Required, unless `secret` is given instead. */
  readonly tenants: TenantsOptions<R>;
  /** Not with `tenants`: each tenant's secret comes from `tenants.secret`. */
  readonly secret?: undefined;
}

/** Where an entry's secrets come from: exactly one of `secret` (one endpoint) or `tenants`. */
export type SecretOrTenants<R> = SingleEndpoint | TenantEndpoints<R>;

/** Options of rc.1 by the place they have now: a caller that still gives one is told, not ignored. */
const MOVED = {
  leaseMs: 'dedup.leaseMs',
  maxClaimMs: 'dedup.maxClaimMs',
  retentionMs: 'dedup.retentionMs',
  dedupUnavailable: "dedup.whenUnavailable ('reject' or 'process')",
  onStoreError: "dedup.onError, and tenants.onLookupError for a tenant's secret",
  tenant: 'tenants.of, beside tenants.secret',
  secretCacheMs: 'tenants.cacheMs',
  secretLookupTimeoutMs: 'tenants.lookupTimeoutMs',
  secretCacheSize: 'tenants.cacheSize',
} as const;

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
  /** `tenants.of`, as given at creation; `undefined` for one endpoint. */
  readonly tenantOf: TenantOf<never> | undefined;
}

/**
 * `options` when it is an object; throws `WebhookOptionsError` for anything else. Each entry checks its
 * options with it before it reads one, so that `verifyWebhook(undefined)` is an option mistake, not a
 * `TypeError` from reading a property of nothing.
 */
export function entryOptions<T>(options: T): T & object {
  if (options === null || typeof options !== 'object') {
    throw new WebhookOptionsError('svc-webhooks: options with a secret (or tenants) are required');
  }
  return options;
}

/**
 * Builds the receiver's steps; `tenants.of` is typed by each entry for its
 * own request. Checks the options once; throws `WebhookOptionsError`.
 */
export function createReceiver(options: ReceiverOptions & SecretOrTenants<never>): Receiver {
  entryOptions(options);
  checkRenamed(options, MOVED);
  const { secret, tenants, bodyTimeoutMs = 10_000 } = options;
  const verifyOptions = resolveVerifyOptions(options);
  const { maxPayloadBytes, now } = verifyOptions;
  checkDuration('bodyTimeoutMs', bodyTimeoutMs, MAX_TIMER_MS);
  if (typeof secret === 'function') {
    throw new WebhookOptionsError('svc-webhooks: a secret looked up per tenant is now tenants.secret, beside tenants.of, which reads the tenant from the request');
  }
  if ((secret === undefined) === (tenants === undefined)) {
    throw new WebhookOptionsError('svc-webhooks: give secret (one endpoint) or tenants (many tenants, each with its own secret): exactly one of them');
  }
  if (tenants !== undefined) {
    checkOptionsObject('tenants', tenants);
    if (typeof tenants.of !== 'function') throw new WebhookOptionsError('svc-webhooks: tenants.of must be a function from the request to the tenant');
    checkCallback('tenants.onLookupError', tenants.onLookupError);
  }
  const dedupOptions = options.dedup === undefined ? {} : options.dedup;
  if (dedupOptions !== false) checkDedupObject(dedupOptions, 'an object of options ({ store, leaseMs, … }) or false');
  const dedup = dedupOptions === false ? undefined : dedupOptions;
  const store = dedup === undefined ? undefined : dedup.store === undefined ? new MemoryDedupStore({ now }) : dedup.store;
  const logger = checkLogger(options.logger);
  const ordering = checkOrdering(options.ordering);
  if (ordering !== undefined && store === undefined) {
    throw new WebhookOptionsError('svc-webhooks: ordering needs dedup: the store records each object\'s version; give dedup (or leave it out for a memory store), not false');
  }
  const claim = store === undefined ? undefined : dedupClaims(store, dedup!, ordering, logger);
  // The secret resolver's failures get a log of their own, so a failing dedup store cannot quiet them.
  const verify: TenantVerify =
    tenants === undefined
      ? verifierOf(cachedKeys(secret as WebhookSecret), verifyOptions)
      : createTenantVerify(
          tenants,
          verifyOptions,
          storeErrorReporter(tenants.onLookupError ?? storeErrorLog(tenants.secret, undefined, logger), logger, 'tenants.onLookupError'),
        );
  const tenantOf = tenants?.of;

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
    tenantOf,
  };
}

/**
 * The verify step of a receiver of one endpoint, with `node:crypto` or else
 * Web Crypto: a refusal as an answer.
 */
function verifierOf(keys: readonly DecodedKey[], options: ResolvedVerifyOptions): TenantVerify {
  const refusal = (error: unknown): DecidedResponse => refused(error);
  return (payload, headers) => {
    try {
      return whenSettled(verifyOnThisRuntime(payload, headers, keys, options), (delivery) => delivery, refusal);
    } catch (error) {
      return refused(error);
    }
  };
}
