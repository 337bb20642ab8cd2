/**
 * A lease this process holds on an event in a dedup store, renewed while the
 * user's code runs, so that a retry finds the event in progress for as long
 * as that code runs, however long, and renewal stops at the claim's limit.
 */
import { after, type Deadline, type DeadlineQueue } from '../base/deadlines.js';
import type { EventOrder } from '../core/event-order.js';
import type { DedupStore, OrderingDedupStore } from '../stores/dedup-store.js';
import { retryBefore } from './retry.js';
import { tellStoreFailure } from './store-failures.js';

/** A lease this process holds: whose, on what, and for how long each time. */
export interface HeldLease {
  readonly store: DedupStore;
  /** The dedup key the lease is on. */
  readonly key: string;
  readonly token: string;
  readonly leaseMs: number;
  /** When `begin` was sent, by `Date.now()`: the lease ends `leaseMs` after that at the earliest. */
  readonly claimedAt: number;
  /** How long after `claimedAt` renewal stops, so that the lease ends then at the latest. */
  readonly maxClaimMs: number;
  /** The tenant of the delivery, for the store channel. */
  readonly tenant?: string;
  /** The event's order, when it is ordered: the store then holds its object under the same lease. */
  readonly order?: EventOrder;
}

/** The time from a renewal being sent to the next: a third of the lease, leaving two thirds for retries. */
export function renewalDelay(leaseMs: number): number {
  return leaseMs - Math.floor((2 * leaseMs) / 3);
}

/**
 * Renews a lease each third of `leaseMs`; a renewal that fails is retried
 * until the lease is about to end. Renewal stops when the claim is settled,
 * when the store answers that the token no longer holds the lease, or
 * `maxClaimMs` after the claim: the last renewal is shortened to end the
 * lease right then, so code that never ends cannot keep its event from the
 * sender's retries. A process that dies stops renewing with it, so its
 * lease runs out within `leaseMs`.
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
    this.#next = after(Math.max(0, this.#expiresAt - Date.now() - Math.floor((2 * leaseMs) / 3)), () => void this.#renew());
  }

  async #renew(): Promise<void> {
    if (this.#stopped) return;
    const { store, key, token, leaseMs, claimedAt, maxClaimMs, tenant, order } = this.#lease;
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
          return await (order === undefined ? store.renew(key, token, grantMs) : (store as OrderingDedupStore).renewInOrder(key, order, token, grantMs));
        },
        (error, attempt) => tellStoreFailure('renew', key, attempt, error, tenant),
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
