/**
 * The embedded `DedupStore`: one process, bounded memory, no dependencies.
 * Every operation is O(1): expiry is checked when an id is touched, and a
 * background sweep (an `unref()`'d timer) only gives back the memory of
 * ids nobody touches again.
 */
import { randomUUID } from 'node:crypto';
import { checkCallback, checkDuration, MAX_TIMER_MS } from '../core/option-checks.js';
import type { BeginResult, DedupStore } from './dedup-store.js';
import { WebhookVerificationError } from '../core/errors.js';

/** Options of `new MemoryDedupStore()`. */
export interface MemoryDedupStoreOptions {
  /**
   * The most ids held at once, leased and done together. When full, a new
   * claim forgets the oldest expired lease or else the oldest done id (a
   * retry of that event would be processed again). Live leases are never
   * dropped: if every id is leased, `begin` rejects with `dedup_unavailable`
   * and the receiver answers 503, so the sender retries later.
   * @default 100000
   */
  readonly maxEntries?: number;
  /**
   * How often, in milliseconds, expired ids are dropped from memory.
   * @default 60000
   */
  readonly sweepIntervalMs?: number;
  /**
   * The clock, in milliseconds since the Unix epoch.
   * @default Date.now
   */
  readonly now?: () => number;
}

interface Lease {
  readonly token: string;
  readonly expiresAt: number;
}

const IN_PROGRESS: BeginResult = Object.freeze({ state: 'in_progress' });
const DONE: BeginResult = Object.freeze({ state: 'done' });

export class MemoryDedupStore implements DedupStore {
  readonly #maxEntries: number;
  readonly #now: () => number;
  // A Map iterates in insertion order, so the first lease is the oldest claim
  // and the first done id the oldest completion: eviction stays O(1).
  readonly #leases = new Map<string, Lease>();
  readonly #done = new Map<string, number>();
  readonly #timer: ReturnType<typeof setInterval>;

  /** Checks the options once; throws `TypeError`. Call `close()` when done with the store. */
  constructor(options: MemoryDedupStoreOptions = {}) {
    if (options === null || typeof options !== 'object') {
      throw new TypeError('svc-webhooks: MemoryDedupStore options must be an object');
    }
    const { maxEntries = 100_000, sweepIntervalMs = 60_000, now = Date.now } = options;
    if (!Number.isSafeInteger(maxEntries) || maxEntries < 1) {
      throw new TypeError('svc-webhooks: maxEntries must be a positive integer');
    }
    checkDuration('sweepIntervalMs', sweepIntervalMs, MAX_TIMER_MS);
    checkCallback('now', now);
    this.#maxEntries = maxEntries;
    this.#now = now;
    this.#timer = setInterval(() => this.#sweep(), sweepIntervalMs);
    // A store alone must not keep a Node process alive; Workers' timers are plain numbers.
    if (typeof this.#timer === 'object' && typeof this.#timer.unref === 'function') this.#timer.unref();
  }

  /** How many ids are held, leased or done, expired ones not yet swept included. */
  get size(): number {
    return this.#leases.size + this.#done.size;
  }

  async begin(id: string, leaseMs: number): Promise<BeginResult> {
    checkDuration('leaseMs', leaseMs);
    const now = this.#now();
    const doneUntil = this.#done.get(id);
    if (doneUntil !== undefined) {
      if (doneUntil > now) return DONE;
      this.#done.delete(id);
    }
    const lease = this.#leases.get(id);
    if (lease !== undefined) {
      if (lease.expiresAt > now) return IN_PROGRESS;
      this.#leases.delete(id);
    }
    this.#makeRoom(now);
    const token = randomUUID();
    this.#leases.set(id, { token, expiresAt: now + leaseMs });
    return { state: 'claimed', token };
  }

  async complete(id: string, token: string, ttlMs: number): Promise<boolean> {
    checkDuration('ttlMs', ttlMs);
    if (!this.#holds(id, token)) return false;
    const now = this.#now();
    this.#leases.delete(id);
    this.#done.set(id, now + ttlMs);
    return true;
  }

  async release(id: string, token: string): Promise<boolean> {
    if (!this.#holds(id, token)) return false;
    this.#leases.delete(id);
    return true;
  }

  async renew(id: string, token: string, leaseMs: number): Promise<boolean> {
    checkDuration('leaseMs', leaseMs);
    if (!this.#holds(id, token)) return false;
    this.#leases.set(id, { token, expiresAt: this.#now() + leaseMs });
    return true;
  }

  /** Stops the background sweep. The store still answers; expired ids then leave memory only when touched or evicted. */
  close(): void {
    clearInterval(this.#timer);
  }

  /** Whether `token` holds a live lease on `id`; an expired lease is held by nobody. */
  #holds(id: string, token: string): boolean {
    const lease = this.#leases.get(id);
    return lease !== undefined && lease.token === token && lease.expiresAt > this.#now();
  }

  /** Frees one slot if the store is full, losing no live lease; throws `dedup_unavailable` if it cannot. */
  #makeRoom(now: number): void {
    if (this.size < this.#maxEntries) return;
    const oldestLease = this.#leases.entries().next();
    if (!oldestLease.done && oldestLease.value[1].expiresAt <= now) {
      this.#leases.delete(oldestLease.value[0]);
      return;
    }
    const oldestDone = this.#done.keys().next();
    if (!oldestDone.done) {
      this.#done.delete(oldestDone.value);
      return;
    }
    throw new WebhookVerificationError('dedup_unavailable', 'the memory dedup store is full of live leases; retry later');
  }

  #sweep(): void {
    const now = this.#now();
    // Deleting the current entry while iterating a Map is safe.
    for (const [id, expiresAt] of this.#done) if (expiresAt <= now) this.#done.delete(id);
    for (const [id, lease] of this.#leases) if (lease.expiresAt <= now) this.#leases.delete(id);
  }
}
