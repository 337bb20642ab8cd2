/** Keeping a claim's lease alive while its route runs. */
import type { DedupStore } from '../stores/dedup-store.js';
import { retryBefore } from './retry-before.js';

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

/**
 * Renews a lease each third of `leaseMs`, so that a retry finds the event
 * in progress for as long as its route runs, however long that is; a
 * renewal that fails is retried until the lease is about to end. Renewal
 * stops when the route is settled, when the store answers that the token
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
  #timer: ReturnType<typeof setTimeout> | undefined;
  #stopped = false;

  /** Starts renewing; `onGiveUp` hears of a renewal that still failed when the lease was about to end. */
  constructor(lease: HeldLease, onGiveUp: (error: unknown) => Promise<void>) {
    this.#lease = lease;
    this.#onGiveUp = onGiveUp;
    this.#expiresAt = lease.claimedAt + lease.leaseMs;
    this.#schedule();
  }

  /** Stops renewing. Answers the earliest the lease can end, by `Date.now()`. */
  stop(): number {
    this.#stopped = true;
    clearTimeout(this.#timer);
    return this.#expiresAt;
  }

  /** The moment a store operation on this lease should start by, to answer before the lease ends. */
  static deadline(expiresAt: number, leaseMs: number): number {
    return expiresAt - Math.ceil(leaseMs / 10);
  }

  #schedule(): void {
    const { leaseMs } = this.#lease;
    // Renew once a third of the lease has passed, leaving two thirds for retries.
    const delay = Math.max(0, this.#expiresAt - Date.now() - Math.floor((2 * leaseMs) / 3));
    this.#timer = setTimeout(() => void this.#renew(), delay);
    // A lease alone must not keep a Node process alive; Workers' timers are plain numbers.
    if (typeof this.#timer === 'object' && typeof this.#timer.unref === 'function') this.#timer.unref();
  }

  async #renew(): Promise<void> {
    const { store, id, token, leaseMs, claimedAt, maxClaimMs } = this.#lease;
    const holdEnd = claimedAt + maxClaimMs;
    const grantMs = Math.min(leaseMs, holdEnd - Date.now());
    // The lease ends at the hold limit already.
    if (holdEnd <= this.#expiresAt || grantMs < 1) return;
    let sentAt = 0;
    let held: boolean;
    try {
      held = await retryBefore(LeaseRenewal.deadline(this.#expiresAt, leaseMs), async () => {
        // Once settled, the lease is the settlement's business: no further try.
        if (this.#stopped) return false;
        sentAt = Date.now();
        return await store.renew(id, token, grantMs);
      });
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
