/**
 * A delivery's claim on its event, from the moment `begin` granted it until
 * its outcome is recorded: the lease renewed while the user's code runs,
 * the outcome settled (complete after the event was taken, release
 * otherwise), store failures retried while the lease lives, and the
 * operator told of those that outlast it. The same for a receiver and a
 * queue worker.
 */
import { DeadlineQueue } from '../base/deadlines.js';
import { checkCallback, checkDuration, MAX_TIMER_MS } from '../base/option-checks.js';
import { whenSettled } from '../base/user-code.js';
import type { WebhookDelivery } from '../core/delivery.js';
import { WebhookDedupError } from '../core/errors.js';
import { eventOrder, type CheckedOrdering, type EventOrder } from '../core/event-order.js';
import { answersAtOnce, isDedupStore, missingOrderingMethods, orderedAnswersAtOnce, type AnswersAtOnce, type DedupStore, type OrderedAnswersAtOnce, type OrderingDedupStore } from '../stores/dedup-store.js';
import { LeaseRenewal, renewalDelay, type HeldLease } from './lease.js';
import { retryBefore } from './retry.js';
import { tellStoreFailure, type StoreErrorCallback, type StoreErrorContext, type StoreErrorReport } from './store-failures.js';
import { WebhookOptionsError } from '../base/options-error.js';

/** What a receiver's and a worker's `dedup` options share: their claims' durations, and `onError`. */
export interface ClaimOptions {
  readonly leaseMs?: number;
  readonly maxClaimMs?: number;
  readonly retentionMs?: number;
  readonly onError?: StoreErrorCallback;
}

/** How every claim on one store is held: checked once, from a receiver's or a worker's options. */
export interface ClaimSettings {
  readonly store: DedupStore;
  readonly leaseMs: number;
  readonly maxClaimMs: number;
  readonly retentionMs: number;
  readonly report: StoreErrorReport;
  /** Where first renewals wait their turn. */
  readonly renewals: DeadlineQueue;
  /** How events about one object are put in order, when they are: the store then orders too. */
  readonly ordering?: CheckedOrdering;
}

/** The durations of `ClaimSettings`, checked. */
export type ClaimDurations = Pick<ClaimSettings, 'leaseMs' | 'maxClaimMs' | 'retentionMs'>;

const STORE_AS_DEDUP = 'svc-webhooks: dedup takes options, not the store: give the store as dedup: { store }';

/**
 * The `dedup` options of a receiver or a worker, as an object: refuses a
 * store given in their place (`dedup` took the store itself before 1.0.0),
 * which would otherwise be read as options and its own store ignored.
 * `what` says what `dedup` takes, for the message. Throws `WebhookOptionsError`.
 */
export function checkDedupObject(dedup: unknown, what: string): void {
  if (typeof dedup !== 'object' || dedup === null) {
    if (isDedupStore(dedup)) throw new WebhookOptionsError(STORE_AS_DEDUP);
    throw new WebhookOptionsError(`svc-webhooks: dedup must be ${what}`);
  }
  // One that lacks a method is a store all the same: read as options, it would go unused without a word.
  if (isDedupStore(dedup) || 'begin' in dedup) throw new WebhookOptionsError(STORE_AS_DEDUP);
}

/**
 * The claim options' durations with their defaults, `maxClaimMs` defaulting
 * to `defaultMaxClaimMs` (or `leaseMs` if that is longer), and `onError`
 * checked; each named as a member of `dedup`. Throws `WebhookOptionsError` for bad options.
 */
export function checkClaimOptions(options: ClaimOptions, defaultMaxClaimMs: number): ClaimDurations {
  const { leaseMs = 60_000, retentionMs = 4 * 24 * 3600_000 } = options;
  const { maxClaimMs = Math.max(defaultMaxClaimMs, leaseMs) } = options;
  // Renewal sets a timer for a third of the lease.
  checkDuration('dedup.leaseMs', leaseMs, MAX_TIMER_MS);
  checkDuration('dedup.retentionMs', retentionMs);
  checkDuration('dedup.maxClaimMs', maxClaimMs);
  if (maxClaimMs < leaseMs) throw new WebhookOptionsError('svc-webhooks: dedup.maxClaimMs must be at least dedup.leaseMs');
  checkCallback('dedup.onError', options.onError);
  return { leaseMs, maxClaimMs, retentionMs };
}

/**
 * The settings of the claims on `store`, failures told to `report`, events
 * put in order by `ordering` when given. Throws `WebhookOptionsError` for a
 * `store` that is no `DedupStore`, or that cannot order when `ordering` is given.
 */
export function claimSettings(store: unknown, durations: ClaimDurations, report: StoreErrorReport, ordering?: CheckedOrdering): ClaimSettings {
  if (!isDedupStore(store)) throw new WebhookOptionsError('svc-webhooks: dedup.store must be a DedupStore (begin, complete, release and renew)');
  const renewals = new DeadlineQueue(renewalDelay(durations.leaseMs));
  if (ordering === undefined) return { store, ...durations, report, renewals };
  const missing = missingOrderingMethods(store);
  if (missing.length > 0) {
    throw new WebhookOptionsError(`svc-webhooks: ordering needs a dedup store that orders events (an OrderingDedupStore); this one lacks ${missing.join(', ')}`);
  }
  return { store, ...durations, report, renewals, ordering };
}

/**
 * Settles a held claim: `taken` completes it, anything else releases it.
 * Answers `undefined` when the store settled it at once, or else a promise
 * that never rejects. Settles once however often it is called.
 */
export type Settle = (taken: boolean) => Promise<void> | undefined;

/** What beginning a claim led to: a claim held, an event done or held elsewhere, or a store that failed. */
export type ClaimAttempt =
  | {
      readonly state: 'claimed';
      readonly settle: Settle;
      /** Whether a higher version of the event's object was processed already: with `ordering` alone. */
      readonly stale: boolean;
    }
  | { readonly state: 'done' }
  | { readonly state: 'in_progress' }
  | { readonly state: 'unavailable'; readonly error: unknown }
  /** `ordering` could not read the event's order: its `key` or `version` threw or answered what cannot order. */
  | { readonly state: 'unordered'; readonly error: WebhookDedupError };

/** What a store failure of a claim is about: the delivery's dedup key, id, type and tenant. */
type ClaimTarget = Omit<StoreErrorContext, 'operation'>;

/**
 * Begins a claim on the delivery's `dedupKey` and, once granted, holds it
 * (see `holdClaim`). A store that failed, or answered no state a store may
 * answer, is told to the store channel and to the operator, naming the
 * delivery (its id, type and tenant). Never rejects; a store that answers
 * at once is answered at once.
 */
export function claimKey(settings: ClaimSettings, delivery: Pick<WebhookDelivery, 'dedupKey' | 'id' | 'event' | 'tenant'>): ClaimAttempt | Promise<ClaimAttempt> {
  const { dedupKey: key, id, tenant } = delivery;
  const target: ClaimTarget = { key, id, type: delivery.event.type, ...(tenant !== undefined && { tenant }) };
  const claimedAt = Date.now();
  const { store, leaseMs, maxClaimMs, ordering } = settings;
  let order: EventOrder | undefined;
  if (ordering !== undefined) {
    try {
      order = eventOrder(ordering, delivery);
    } catch (error) {
      return { state: 'unordered', error: error as WebhookDedupError };
    }
  }
  let beginning: unknown;
  try {
    if (order === undefined) {
      const atOnce = answersAtOnce(store);
      beginning = atOnce === undefined ? store.begin(key, leaseMs) : atOnce.begin(key, leaseMs);
    } else {
      const ordered = store as OrderingDedupStore;
      const atOnce = orderedAnswersAtOnce(ordered);
      beginning = atOnce === undefined ? ordered.beginInOrder(key, order, leaseMs) : atOnce.beginInOrder(key, order, leaseMs);
    }
  } catch (error) {
    return unavailable(settings, target, error);
  }
  const begun = (answer: unknown): ClaimAttempt => {
    // A store is the caller's code: an answer it should never give must not read as a claim.
    if (!isBeginResult(answer, order !== undefined)) return unavailable(settings, target, new WebhookOptionsError("svc-webhooks: the dedup store's begin answered no known state"));
    if (answer.state !== 'claimed') return answer;
    const lease: HeldLease = { store, key, token: answer.token, leaseMs, claimedAt, maxClaimMs, tenant, order };
    return { state: 'claimed', settle: holdClaim(lease, target, settings), stale: answer.stale === true };
  };
  // A reaction, not an async function: what begin answered is adopted as `await` does, a turn sooner.
  return whenSettled(beginning, begun, (error: unknown) => unavailable(settings, target, error));
}

/**
 * Starts renewing the claim's lease and answers its `settle`: it stops the
 * renewal, then completes the claim once the event was taken or releases it.
 * A store failure is retried until the lease is about to end, since once it
 * ends another delivery may take the event; only then is the operator told.
 * Its promise never rejects, so an entry may leave it running after the
 * response went out.
 */
function holdClaim(lease: HeldLease, target: ClaimTarget, { retentionMs, report, renewals }: ClaimSettings): Settle {
  const { store, key, token, leaseMs, tenant, order } = lease;
  const context = (operation: 'complete' | 'release' | 'renew'): StoreErrorContext => ({ operation, ...target });
  const renewal = new LeaseRenewal(lease, (error) => report(error, context('renew')), renewals);
  let settled = false;
  let settling: Promise<void> | undefined;

  const settle = (taken: boolean): Promise<void> | undefined => {
    const deadline = LeaseRenewal.deadline(renewal.stop(), leaseMs);
    const operation = taken ? 'complete' : 'release';
    let tried = 0;
    const ordered = store as OrderingDedupStore;
    const atOnce = order === undefined ? answersAtOnce(store) : orderedAnswersAtOnce(ordered);
    if (atOnce !== undefined) {
      try {
        if (order !== undefined) {
          const inOrder = atOnce as OrderedAnswersAtOnce;
          if (taken) inOrder.completeInOrder(key, order, token, retentionMs);
          else inOrder.releaseInOrder(key, order, token);
        } else if (taken) (atOnce as AnswersAtOnce).complete(key, token, retentionMs);
        else (atOnce as AnswersAtOnce).release(key, token);
        return undefined;
      } catch (error) {
        // Told, then retried by the methods, as any store's failure is.
        tellStoreFailure(operation, key, ++tried, error, tenant);
      }
    }
    return retryBefore(
      deadline,
      () =>
        order === undefined
          ? taken
            ? store.complete(key, token, retentionMs)
            : store.release(key, token)
          : taken
            ? ordered.completeInOrder(key, order, token, retentionMs)
            : ordered.releaseInOrder(key, order, token),
      (error, attempt) => tellStoreFailure(operation, key, attempt, error, tenant),
      tried,
    ).then(ignore, (error: unknown) => report(error, context(operation)));
  };
  return (taken) => {
    if (!settled) {
      settled = true;
      settling = settle(taken);
    }
    return settling;
  };
}

const ignore = (): void => undefined;

function unavailable({ report }: ClaimSettings, target: ClaimTarget, error: unknown): ClaimAttempt {
  tellStoreFailure('begin', target.key, 1, error, target.tenant);
  void report(error, { operation: 'begin', ...target });
  return { state: 'unavailable', error };
}

/** What `begin` may answer, and `beginInOrder` where `ordered`: a claim of the latter says whether it is stale. */
type Begun = { readonly state: 'claimed'; readonly token: string; readonly stale?: boolean } | { readonly state: 'in_progress' } | { readonly state: 'done' };

function isBeginResult(value: unknown, ordered: boolean): value is Begun {
  const result = value as Partial<{ state: unknown; token: unknown; stale: unknown }> | null;
  if (typeof result !== 'object' || result === null) return false;
  if (result.state === 'claimed') return typeof result.token === 'string' && (!ordered || typeof result.stale === 'boolean');
  return result.state === 'in_progress' || result.state === 'done';
}
