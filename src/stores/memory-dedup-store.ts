/**
 * The embedded `DedupStore`: one process, bounded memory, no dependencies.
 * Every operation is O(1) but for a sweep, at most once per
 * `sweepIntervalMs`, that gives back the memory of expired ids nobody
 * touches again: expiry is checked when an id is touched. The sweep runs
 * within `begin`, not on a timer: a timer would keep a process alive, and a
 * Cloudflare Worker refuses one started at module scope.
 */
import { randomBytes } from 'node:crypto';
import { checkCallback, checkDuration, checkOptionsObject, MAX_TIMER_MS } from '../base/option-checks.js';
import { answerAtOnce, type BeginResult, type DedupStore } from './dedup-store.js';
import { WebhookDedupError } from '../core/errors.js';
import { EntryQueue } from './entry-queue.js';

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
   * How often at most, in milliseconds, expired ids are dropped from memory
   * (by the next `begin`).
   * @default 60000
   */
  readonly sweepIntervalMs?: number;
  /**
   * The clock, in milliseconds since the Unix epoch.
   * @default Date.now
   */
  readonly now?: () => number;
}

/** An id's state: leased under `token`, or done once `token` is undefined; it counts until `expiresAt`. */
interface Entry {
  readonly id: string;
  readonly token: string | undefined;
  readonly expiresAt: number;
}

/** Stale entries a queue may hold beyond twice the store's entries before it is compacted. */
const QUEUE_SLACK = 1024;

const IN_PROGRESS: BeginResult = Object.freeze({ state: 'in_progress' });
const DONE: BeginResult = Object.freeze({ state: 'done' });

/**
 * The `DedupStore` of one process, in its memory, with no dependency: what
 * every entry uses when given no `dedup`. Bounded by `maxEntries`; its
 * leases and done ids do not survive a restart, nor reach another process.
 */
export class MemoryDedupStore implements DedupStore {
  readonly #maxEntries: number;
  readonly #now: () => number;
  readonly #entries = new Map<string, Entry>();
  // Entries are never changed, only replaced, so a queued entry is current while the map still holds it.
  readonly #isCurrent = (entry: Entry): boolean => this.#entries.get(entry.id) === entry;
  /** Leases in order of claim or renewal: the first is the oldest, the one to evict if it ran out. */
  readonly #leases = new EntryQueue(this.#isCurrent);
  /** Done ids in order of completion: the first is the one to forget when full. */
  readonly #done = new EntryQueue(this.#isCurrent);
  readonly #sweepIntervalMs: number;
  #nextSweepAt = -Infinity;
  #tokenPrefix: string | undefined;
  #claims = 0;

  /** Checks the options once; throws `TypeError`. */
  constructor(options: MemoryDedupStoreOptions = {}) {
    checkOptionsObject('MemoryDedupStore', options);
    const { maxEntries = 100_000, sweepIntervalMs = 60_000, now = Date.now } = options;
    if (!Number.isSafeInteger(maxEntries) || maxEntries < 1) {
      throw new TypeError('svc-webhooks: maxEntries must be a positive integer');
    }
    checkDuration('sweepIntervalMs', sweepIntervalMs, MAX_TIMER_MS);
    checkCallback('now', now);
    this.#maxEntries = maxEntries;
    this.#now = now;
    this.#sweepIntervalMs = sweepIntervalMs;
    answerAtOnce(this, MemoryDedupStore.prototype, { begin: this.#begin, complete: this.#complete, release: this.#release });
  }

  /** How many ids are held, leased or done, expired ones not yet swept included. */
  get size(): number {
    return this.#entries.size;
  }

  // Each method answers its operation (below) as a settled promise; a claim calls the operations at once.

  /** Claims `id` for `leaseMs`, unless another delivery holds it or it is done; see `DedupStore.begin`. */
  begin(id: string, leaseMs: number): Promise<BeginResult> {
    return settledWith(this.#begin, id, leaseMs);
  }

  /** Marks `id` done for `retentionMs` if `token` still holds its lease; see `DedupStore.complete`. */
  complete(id: string, token: string, retentionMs: number): Promise<boolean> {
    return settledWith(this.#complete, id, token, retentionMs);
  }

  /** Drops the lease on `id` if `token` still holds it; see `DedupStore.release`. */
  release(id: string, token: string): Promise<boolean> {
    return settledWith(this.#release, id, token);
  }

  /** Moves the end of the lease on `id` to `leaseMs` from now if `token` still holds it; see `DedupStore.renew`. */
  renew(id: string, token: string, leaseMs: number): Promise<boolean> {
    // Queued again, last: the first lease stays the oldest claim or renewal.
    return settledWith(this.#replaceLease, id, token, 'leaseMs', leaseMs, this.#leases, token);
  }

  /** Nothing to stop: the store holds no timer. Kept so that code closing the store on shutdown still runs. */
  close(): void {}

  // The operations themselves, answering at once or throwing; the public methods answer them as promises.
  readonly #begin = (id: string, leaseMs: number): BeginResult => {
    checkDuration('leaseMs', leaseMs);
    const now = this.#now();
    if (now >= this.#nextSweepAt) this.#sweep(now);
    const held = this.#entries.get(id);
    if (held !== undefined && held.expiresAt > now) return held.token === undefined ? DONE : IN_PROGRESS;
    // An expired entry of the same id is replaced in its slot; only a new id needs room.
    if (held === undefined) this.#makeRoom(now);
    const token = this.#newToken();
    this.#enqueue(this.#leases, { id, token, expiresAt: now + leaseMs });
    return { state: 'claimed', token };
  };

  readonly #complete = (id: string, token: string, retentionMs: number): boolean =>
    this.#replaceLease(id, token, 'retentionMs', retentionMs, this.#done, undefined);

  readonly #release = (id: string, token: string): boolean => {
    const held = this.#held(id, token, this.#now());
    if (held === undefined) return false;
    this.#leases.dropNewest(held);
    this.#entries.delete(id);
    return true;
  };

  /** The live lease `token` holds on `id` at `now`, if it does; an expired lease is held by nobody. */
  #held(id: string, token: string, now: number): Entry | undefined {
    const entry = this.#entries.get(id);
    return entry !== undefined && entry.token !== undefined && entry.token === token && entry.expiresAt > now ? entry : undefined;
  }

  /**
   * A token no other claim of this store gets, nor likely any other store's: a random prefix of the
   * store's own and a count. The prefix is drawn at the first claim rather than in the constructor, as
   * a Worker refuses random values in its global scope, where the store may be created.
   */
  #newToken(): string {
    this.#tokenPrefix ??= `${randomBytes(16).toString('hex')}-`;
    return this.#tokenPrefix + (this.#claims++).toString(36);
  }

  /**
   * If `token` holds a live lease on `id`, replaces it with an entry ending
   * `ms` (the duration `name`) from now, held by `newToken` or done if that is
   * undefined, and queues it on `queue`. Answers whether it did.
   */
  readonly #replaceLease = (id: string, token: string, name: string, ms: number, queue: EntryQueue<Entry>, newToken: string | undefined): boolean => {
    checkDuration(name, ms);
    const now = this.#now();
    const held = this.#held(id, token, now);
    if (held === undefined) return false;
    // Replaced, the lease is stale in its queue; the newest there (a claim settled at once) goes now.
    this.#leases.dropNewest(held);
    this.#enqueue(queue, { id, token: newToken, expiresAt: now + ms });
    return true;
  };

  #enqueue(queue: EntryQueue<Entry>, entry: Entry): void {
    this.#entries.set(entry.id, entry);
    queue.push(entry);
    if (queue.length > 2 * this.#entries.size + QUEUE_SLACK) queue.compact();
  }

  /** Frees one slot if the store is full, losing no live lease; throws `dedup_unavailable` if it cannot. */
  #makeRoom(now: number): void {
    if (this.#entries.size < this.#maxEntries) return;
    const oldestLease = this.#leases.first();
    const oldest = oldestLease !== undefined && oldestLease.expiresAt <= now ? oldestLease : this.#done.first();
    if (oldest === undefined) {
      throw new WebhookDedupError('dedup_unavailable', 'the memory dedup store is full of live leases; retry later');
    }
    // Deleted from the map, it is stale in its queue, which drops it when next met.
    this.#entries.delete(oldest.id);
  }

  #sweep(now: number): void {
    this.#nextSweepAt = now + this.#sweepIntervalMs;
    // Deleting the current entry while iterating a Map is safe.
    for (const [id, entry] of this.#entries) if (entry.expiresAt <= now) this.#entries.delete(id);
    this.#leases.compact();
    this.#done.compact();
  }
}

/**
 * What `operation` answers, as a settled promise: a throw (a bad duration, a
 * failing clock, a full store) becomes a rejection, as in an async function,
 * which would cost more per call.
 */
function settledWith<A extends unknown[], T>(operation: (...args: A) => T, ...args: A): Promise<T> {
  try {
    return Promise.resolve(operation(...args));
  } catch (error) {
    return Promise.reject(error);
  }
}
