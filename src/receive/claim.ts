/**
 * A delivery's claim on its event, from the moment `begin` granted it until
 * its outcome is recorded: the lease renewed while the user's code runs,
 * the outcome settled (complete after a 2xx, release otherwise), store
 * failures retried while the lease lives, and the operator told of those
 * that outlast it.
 */
import { checkCallback, checkDuration, MAX_TIMER_MS } from '../core/option-checks.js';
import type { BeginResult, DedupStore } from '../stores/dedup-store.js';
import { describeStoreError, storeFailureHint } from '../stores/store-failure-hint.js';
import { DeadlineQueue, unref, type Deadline } from './deadlines.js';
import { storeFailures } from './diagnostics.js';
import { reasonOf } from './user-callbacks.js';

/** A store operation of a claim's life, or `'lookup'`: a tenant's secret looked up (see the `tenant` option). */
export type StoreOperation = 'begin' | 'complete' | 'release' | 'renew' | 'lookup';

/** What `onStoreError` learns besides the error: which operation failed, for which event. */
export interface StoreErrorContext {
  readonly operation: StoreOperation;
  /** The event id (the dedup key) the operation was for; for a `lookup`, the request's unverified `webhook-id`. */
  readonly id: string;
  /** The tenant of the request, where the receiver serves many. */
  readonly tenant?: string;
}

/** The user's callback. What it answers is awaited, so it may be async; the value is ignored. */
export type StoreErrorCallback = (error: unknown, context: StoreErrorContext) => unknown;

/** Tells the operator of a store failure; never rejects. */
export type StoreErrorReport = (error: unknown, context: StoreErrorContext) => Promise<void>;

/**
 * Wraps `onStoreError` so that calling it never rejects: it is awaited, and
 * whatever it throws or rejects with is logged in one line. A callback's
 * failure can then neither change an answer nor become an unhandled
 * rejection that takes the process down.
 */
export function storeErrorReporter(onStoreError: StoreErrorCallback): StoreErrorReport {
  return async (error, context) => {
    try {
      await onStoreError(error, context);
    } catch (thrown) {
      console.error(`svc-webhooks: onStoreError threw (${reasonOf(thrown)}) on a failed ${context.operation}`);
    }
  };
}

/** How long the default log stays quiet about a store after a line about it. */
export const STORE_LOG_INTERVAL_MS = 5_000;

/** Per store, however many receivers share it: until when its log stays quiet, and how many failures it left out. */
const quietLogs = new WeakMap<object, { until: number; unlogged: number }>();

/**
 * The default `onStoreError` of a receiver on `store` (a dedup store, or a
 * secret resolver): one line naming the error (class, code, message), what
 * it leads to, and what to do where the cause is known. While the store
 * stays down it writes at most one line per `STORE_LOG_INTERVAL_MS`,
 * counting the failures it left out.
 */
export function storeErrorLog(store: object): StoreErrorCallback {
  return (error, { operation, id, tenant }) => {
    const now = Date.now();
    const quiet = quietLogs.get(store);
    if (quiet !== undefined && now < quiet.until) {
      quiet.unlogged++;
      return;
    }
    const more = quiet !== undefined && quiet.unlogged > 0 ? ` (${quiet.unlogged} more store failures since the last line)` : '';
    quietLogs.set(store, { until: now + STORE_LOG_INTERVAL_MS, unlogged: 0 });
    // The hints name the dedup store's own fixes (its table, migrate()): never a resolver's.
    const hint = operation === 'lookup' ? undefined : storeFailureHint(error);
    const failed =
      operation === 'lookup'
        ? `the secret lookup for tenant ${JSON.stringify(tenant)} failed (delivery ${JSON.stringify(id)}; ${describeStoreError(error)})`
        : `the dedup store failed to ${operation} event ${JSON.stringify(id)} (${describeStoreError(error)})`;
    console.error(`svc-webhooks: ${failed}; ${CONSEQUENCE[operation]}.${hint === undefined ? '' : ` ${hint}`}${more}`);
  };
}

const CONSEQUENCE: Readonly<Record<StoreOperation, string>> = {
  begin: 'the request was answered 503 and the sender will retry it',
  lookup: 'the request was answered 503 and the sender will retry it',
  complete: "the lease ran out first, so a retry of that event may run the handler again",
  release: 'the lease ran out first, so a retry of that event waits for the lease to end',
  renew: "the lease ran out first, so a retry of that event may run the handler again while it still runs",
};

/** The pause after a store operation's first failure; it doubles after each further one, up to the cap. */
const FIRST_PAUSE_MS = 25;
const MAX_PAUSE_MS = 1_000;

/** Publishes a failed store operation on the store channel, while someone listens there. */
export function tellStoreFailure(operation: StoreOperation, id: string, attempt: number, error: unknown, tenant?: string): void {
  if (storeFailures?.hasSubscribers) storeFailures.publish(tenant === undefined ? { operation, id, attempt, error } : { operation, id, attempt, error, tenant });
}

/**
 * Runs `operation`, and again after each rejection, pausing longer each time,
 * as long as the next try starts no later than `deadline` (a `Date.now()`
 * time): the last try starts at the deadline itself. The first try always
 * runs. Resolves to the first answer; rejects with the last error once out
 * of time. `failed` hears of each rejection, with the try's number from 1.
 */
export async function retryBefore<T>(deadline: number, operation: () => Promise<T>, failed?: (error: unknown, attempt: number) => void): Promise<T> {
  for (let pause = FIRST_PAUSE_MS, attempt = 1; ; pause = Math.min(2 * pause, MAX_PAUSE_MS), attempt++) {
    try {
      return await operation();
    } catch (error) {
      failed?.(error, attempt);
      const left = deadline - Date.now();
      if (left <= 0) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.min(pause, left)));
    }
  }
}

/** A lease this process holds: whose, on what, and for how long each time. */
export interface HeldLease {
  readonly store: DedupStore;
  readonly id: string;
  readonly token: string;
  readonly leaseMs: number;
  /** When `begin` was sent, by `Date.now()`: the lease ends `leaseMs` after that at the earliest. */
  readonly claimedAt: number;
  /** How long after `claimedAt` renewal stops, so that the lease ends then at the latest. */
  readonly maxClaimMs: number;
}

/** The time from a renewal being sent to the next: a third of the lease, leaving two thirds for retries. */
export function renewalDelay(leaseMs: number): number {
  return leaseMs - Math.floor((2 * leaseMs) / 3);
}

/**
 * Renews a lease each third of `leaseMs`, so that a retry finds the event
 * in progress for as long as its route runs, however long that is; a
 * renewal that fails is retried until the lease is about to end. Renewal
 * stops when the claim is settled, when the store answers that the token
 * no longer holds the lease, or `maxClaimMs` after the claim: the last
 * renewal is shortened to end the lease right then, so a route that never
 * ends its response cannot keep its event from the sender's retries. A
 * process that dies stops renewing with it, so its lease runs out within
 * `leaseMs`.
 */
export class LeaseRenewal {
  readonly #lease: HeldLease;
  readonly #onGiveUp: (error: unknown) => Promise<void>;
  /** The earliest the lease can end, by `Date.now()`: from the send time of the last renewal it accepted. */
  #expiresAt: number;
  #next: Deadline | undefined;
  #stopped = false;

  /**
   * Starts renewing; `onGiveUp` hears of a renewal that still failed when the
   * lease was about to end. The first renewal is due a `renewalDelay` from
   * now: in `first`, a queue of that length shared by the claims of a
   * receiver, so that a claim settled sooner (most are) sets no timer.
   */
  constructor(lease: HeldLease, onGiveUp: (error: unknown) => Promise<void>, first?: DeadlineQueue) {
    this.#lease = lease;
    this.#onGiveUp = onGiveUp;
    this.#expiresAt = lease.claimedAt + lease.leaseMs;
    if (first === undefined) this.#schedule();
    else this.#next = first.start(() => void this.#renew());
  }

  /** Stops renewing. Answers the earliest the lease can end, by `Date.now()`. */
  stop(): number {
    this.#stopped = true;
    this.#next?.cancel();
    return this.#expiresAt;
  }

  /** The moment a store operation on this lease should start by, to answer before the lease ends. */
  static deadline(expiresAt: number, leaseMs: number): number {
    return expiresAt - Math.ceil(leaseMs / 10);
  }

  #schedule(): void {
    const { leaseMs } = this.#lease;
    const delay = Math.max(0, this.#expiresAt - Date.now() - Math.floor((2 * leaseMs) / 3));
    // A lease alone must not keep a Node process alive.
    const timer = unref(setTimeout(() => void this.#renew(), delay));
    this.#next = { cancel: () => clearTimeout(timer) };
  }

  async #renew(): Promise<void> {
    if (this.#stopped) return;
    const { store, id, token, leaseMs, claimedAt, maxClaimMs } = this.#lease;
    const holdEnd = claimedAt + maxClaimMs;
    const grantMs = Math.min(leaseMs, holdEnd - Date.now());
    // The lease ends at the hold limit already.
    if (holdEnd <= this.#expiresAt || grantMs < 1) return;
    let sentAt = 0;
    let held: boolean;
    try {
      held = await retryBefore(
        LeaseRenewal.deadline(this.#expiresAt, leaseMs),
        async () => {
          // Once settled, the lease is the settlement's business: no further try.
          if (this.#stopped) return false;
          sentAt = Date.now();
          return await store.renew(id, token, grantMs);
        },
        (error, attempt) => tellStoreFailure('renew', id, attempt, error),
      );
    } catch (error) {
      if (!this.#stopped) await this.#onGiveUp(error);
      return;
    }
    // Any other answer: the lease ran out or went to another delivery, and renewing is over.
    if (held !== true || this.#stopped) return;
    this.#expiresAt = sentAt + grantMs;
    // A shortened grant was the last: maxClaimMs ends the lease.
    if (grantMs === leaseMs) this.#schedule();
  }
}

/** A claim `begin` granted, and what holding it takes. */
export interface ClaimToHold extends HeldLease {
  /** How long `complete` marks the id done. */
  readonly retentionMs: number;
  /** Told when the store failed to renew or settle until the lease was about to end. */
  readonly report: StoreErrorReport;
  /** Where the first renewal waits its turn (see `LeaseRenewal`). */
  readonly renewals?: DeadlineQueue;
}

/** Settles a held claim by the status answered; never rejects, and settles once however often it is called. */
export type Settle = (status: number) => Promise<void>;

/**
 * Starts renewing the claim's lease and answers its `settle`: called with
 * the status answered, it stops the renewal, then completes the claim after
 * a 2xx or releases it after anything else. A store failure is retried until
 * the lease is about to end, since once it ends another delivery may take
 * the event; only then is the operator told. Its promise never rejects, so
 * an entry may leave it running after the response went out.
 */
export function holdClaim(claim: ClaimToHold): Settle {
  const { store, id, token, leaseMs, retentionMs, report } = claim;
  const renewal = new LeaseRenewal(claim, (error) => report(error, { operation: 'renew', id }), claim.renewals);
  let settled: Promise<void> | undefined;

  const settle = async (status: number): Promise<void> => {
    const deadline = LeaseRenewal.deadline(renewal.stop(), leaseMs);
    // Only a 2xx tells the sender to stop; anything else must leave the event to its retry.
    const succeeded = status >= 200 && status < 300;
    const operation = succeeded ? 'complete' : 'release';
    try {
      await retryBefore(
        deadline,
        () => (succeeded ? store.complete(id, token, retentionMs) : store.release(id, token)),
        (error, attempt) => tellStoreFailure(operation, id, attempt, error),
      );
    } catch (error) {
      await report(error, { operation, id });
    }
  };
  return (status) => (settled ??= settle(status));
}

/** The options a receiver and a worker share for their claims. */
export interface ClaimOptions {
  readonly leaseMs?: number;
  readonly maxClaimMs?: number;
  readonly retentionMs?: number;
  readonly onStoreError?: StoreErrorCallback;
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
}

/** The durations of `ClaimSettings`, checked. */
export type ClaimDurations = Pick<ClaimSettings, 'leaseMs' | 'maxClaimMs' | 'retentionMs'>;

/**
 * The claim options' durations with their defaults, `maxClaimMs` defaulting
 * to `defaultMaxClaimMs` (or `leaseMs` if that is longer), and `onStoreError`
 * checked. Throws `TypeError` for bad options.
 */
export function checkClaimOptions(options: ClaimOptions, defaultMaxClaimMs: number): ClaimDurations {
  const { leaseMs = 60_000, retentionMs = 4 * 24 * 3600_000 } = options;
  const { maxClaimMs = Math.max(defaultMaxClaimMs, leaseMs) } = options;
  // Renewal sets a timer for a third of the lease.
  checkDuration('leaseMs', leaseMs, MAX_TIMER_MS);
  checkDuration('retentionMs', retentionMs);
  checkDuration('maxClaimMs', maxClaimMs);
  if (maxClaimMs < leaseMs) throw new TypeError('svc-webhooks: maxClaimMs must be at least leaseMs');
  checkCallback('onStoreError', options.onStoreError);
  return { leaseMs, maxClaimMs, retentionMs };
}

/** The settings of the claims on `store`, failures told to `report`. */
export function claimSettings(store: DedupStore, durations: ClaimDurations, report: StoreErrorReport): ClaimSettings {
  return { store, ...durations, report, renewals: new DeadlineQueue(renewalDelay(durations.leaseMs)) };
}

/** What beginning a claim led to: a claim held, an event done or held elsewhere, or a store that failed. */
export type ClaimAttempt =
  | { readonly state: 'claimed'; readonly settle: Settle }
  | { readonly state: 'done' }
  | { readonly state: 'in_progress' }
  | { readonly state: 'unavailable'; readonly error: unknown };

/**
 * Begins a claim on `key` and, once granted, holds it (see `holdClaim`). A
 * store that failed, or answered no state a store may answer, is told to
 * the store channel and to the operator. Never rejects.
 */
export async function claimKey(settings: ClaimSettings, key: string): Promise<ClaimAttempt> {
  const claimedAt = Date.now();
  let begun: unknown;
  try {
    begun = await settings.store.begin(key, settings.leaseMs);
  } catch (error) {
    return unavailable(settings, key, error);
  }
  // A store is the caller's code: an answer it should never give must not read as a claim.
  if (!isBeginResult(begun)) return unavailable(settings, key, new TypeError("svc-webhooks: the dedup store's begin answered no known state"));
  if (begun.state !== 'claimed') return begun;
  return { state: 'claimed', settle: holdClaim({ ...settings, id: key, token: begun.token, claimedAt }) };
}

function unavailable({ report }: ClaimSettings, key: string, error: unknown): ClaimAttempt {
  tellStoreFailure('begin', key, 1, error);
  void report(error, { operation: 'begin', id: key });
  return { state: 'unavailable', error };
}

function isBeginResult(value: unknown): value is BeginResult {
  const result = value as Partial<{ state: unknown; token: unknown }> | null;
  if (typeof result !== 'object' || result === null) return false;
  if (result.state === 'claimed') return typeof result.token === 'string';
  return result.state === 'in_progress' || result.state === 'done';
}
