/**
 * What claiming a delivery's event leads to, as an answer: the claim to run
 * under, or what to send instead (a duplicate, one in progress, a stale
 * event skipped, an order that cannot be read, a failing store). The same
 * for every entry and for `dispatch`.
 */
import type { WebhookLogger } from '../base/logger.js';
import { checkPolicy } from '../base/option-checks.js';
import { whenSettled } from '../base/user-code.js';
import type { WebhookDelivery } from '../core/delivery.js';
import { WebhookDedupError } from '../core/errors.js';
import type { CheckedOrdering } from '../core/event-order.js';
import { checkClaimOptions, claimKey, claimSettings, type ClaimAttempt, type ClaimOptions, type ClaimSettings, type Settle } from '../process/claim.js';
import { storeErrorLog, storeErrorReporter } from '../process/store-failures.js';
import type { DedupStore } from '../stores/dedup-store.js';
import { duplicate, refused, RETRY_SOON, staleSkipped, type DecidedResponse } from './responses.js';

/** What to do when the dedup store fails before the user's code runs. */
export type DedupUnavailablePolicy = 'reject' | 'process';

/** A claim held on a stale event, under `staleEvents: 'run'`: its code runs with `delivery.stale`. */
export interface StaleClaim {
  readonly settle: Settle;
  readonly stale: true;
}

/**
 * What claiming a delivery's event leads to: the `Settle` of a claim held,
 * a `StaleClaim`, `undefined` to run without one (no store, or
 * `whenUnavailable: 'process'`), or the answer to send instead of running
 * anything (a stale event skipped among them).
 */
export type ClaimOutcome = Settle | undefined | StaleClaim | DecidedResponse;

/** What an entry's and `dispatch`'s `dedup` options say of their claims: the claims' own options, and `whenUnavailable`. */
export interface ClaimAnswerOptions extends ClaimOptions {
  readonly whenUnavailable?: DedupUnavailablePolicy;
}

/**
 * The claims on `store` of an entry or of `dispatch`, each answered (see `claimAnswers`): `dedup`'s durations,
 * `whenUnavailable` and `onError` checked (by default a line to `logger`), events put in order by `ordering`
 * where given. Throws `WebhookOptionsError` for bad options, and for a store that cannot order when ordering.
 */
export function dedupClaims(
  store: DedupStore,
  dedup: ClaimAnswerOptions,
  ordering: CheckedOrdering | undefined,
  logger?: WebhookLogger,
): (delivery: WebhookDelivery) => ClaimOutcome | Promise<ClaimOutcome> {
  const durations = checkClaimOptions(dedup, 600_000);
  const whenUnavailable = checkPolicy('dedup.whenUnavailable', dedup.whenUnavailable, ['reject', 'process'] as const) ?? 'reject';
  const report = storeErrorReporter(dedup.onError ?? storeErrorLog(store, undefined, logger), logger);
  return claimAnswers(claimSettings(store, durations, report, ordering), whenUnavailable);
}

/**
 * Claims on the store of `settings`, each answered: at once where the store
 * answers at once, else once it answered. Never rejects: a failing store is
 * an answer (503, or a run without a claim under `'process'`) and a report.
 */
export function claimAnswers(settings: ClaimSettings, whenUnavailable: DedupUnavailablePolicy): (delivery: WebhookDelivery) => ClaimOutcome | Promise<ClaimOutcome> {
  const inProgressHeaders = Object.freeze({ 'retry-after': String(Math.ceil(settings.leaseMs / 1000)) });
  const outcomeOf = (attempt: ClaimAttempt): ClaimOutcome | Promise<ClaimOutcome> => {
    switch (attempt.state) {
      case 'claimed':
        if (!attempt.stale) return attempt.settle;
        if (settings.ordering!.staleEvents === 'run') return { settle: attempt.settle, stale: true };
        return skipStale(attempt.settle);
      case 'unordered':
        return refused(attempt.error);
      case 'done':
        return duplicate();
      case 'in_progress':
        return refused(new WebhookDedupError('delivery_in_progress', 'this event is being processed; retry later'), inProgressHeaders);
      case 'unavailable':
        if (whenUnavailable === 'process') return undefined;
        return refused(new WebhookDedupError('dedup_unavailable', 'the dedup store is unavailable; retry later', { cause: attempt.error }), RETRY_SOON);
    }
  };
  // A claim answered at once is answered at once; otherwise a reaction, not an async function awaiting it.
  return (delivery) => whenSettled(claimKey(settings, delivery), outcomeOf);
}

/** Takes a stale event, so that its retries are duplicates, and answers once the store recorded it, as a handled event is. */
function skipStale(settle: Settle): DecidedResponse | Promise<DecidedResponse> {
  const settling = settle(true);
  return settling === undefined ? staleSkipped() : settling.then(staleSkipped);
}
