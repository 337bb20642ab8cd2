/**
 * The embedded `DedupStore`: one process, bounded memory, no dependencies.
 * Every operation is O(1) but for a sweep, at most once per
 * `sweepIntervalMs`, that gives back the memory of expired ids nobody
 * touches again: expiry is checked when a key is touched. The sweep runs
 * within `begin`, not on a timer: a timer would keep a process alive, and a
 * Cloudflare Worker refuses one started at module scope.
 */
import { checkCallback, checkDuration, checkOptionsObject, MAX_TIMER_MS } from '../base/option-checks.js';
import type { EventOrder } from '../core/event-order.js';
import { answerAtOnce, type BeginResult, type OrderedBeginResult, type OrderingDedupStore } from './dedup-store.js';
import { WebhookDedupError } from '../core/errors.js';
import { KeyQueue } from './key-queue.js';
import { WebhookOptionsError } from '../base/options-error.js';

/** Options of `new MemoryDedupStore()`. */
export interface MemoryDedupStoreOptions {
  /**
   * The most ids held at once, leased and done together. When full, a new
   * claim forgets the oldest expired lease or else the oldest done key (a
   * retry of that event would be processed again). Live leases are never
   * dropped: if every key is leased, `begin` rejects with `dedup_unavailable`
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

/** A lease on a key: held under `token` until `expiresAt`. Never changed, only replaced. */
interface Lease {
  readonly token: string;
  readonly expiresAt: number;
}

/** When what is held on a key ends: a lease's expiry, or a done key's. */
function expiryOf(held: Lease | number): number {
  return typeof held === 'number' ? held : held.expiresAt;
}

/**
 * What the store holds of an object whose events are ordered: the highest version processed, until
 * `versionExpiresAt`, and the lease of the event that runs, if one does. Changed in place.
 */
interface ObjectRecord {
  version: number | undefined;
  versionExpiresAt: number;
  token: string | undefined;
  leaseExpiresAt: number;
}

const IN_PROGRESS = Object.freeze({ state: 'in_progress' } as const);
const DONE = Object.freeze({ state: 'done' } as const);

/**
 * The `DedupStore` of one process, in its memory, with no dependency: what
 * every entry uses when given no `dedup`. Bounded by `maxEntries`; its
 * leases and done keys do not survive a restart, nor reach another process.
 * It orders events too (`OrderingDedupStore`), holding up to `maxEntries`
 * objects besides.
 */
export class MemoryDedupStore implements OrderingDedupStore {
  readonly #maxEntries: number;
  readonly #now: () => number;
  /** Each key held: its lease, or the expiry of a done key, a number alone, as done keys are most of a full store. */
  readonly #entries = new Map<string, Lease | number>();
  /** Leased ids in order of claim or renewal, each current while its lease has the expiry it was queued with: the first is the oldest, the one to evict if it ran out. */
  readonly #leaseOrder = new KeyQueue(
    (key, expiresAt) => {
      const held = this.#entries.get(key);
      return typeof held === 'object' && held.expiresAt === expiresAt;
    },
    this.#entries,
  );
  /** Done ids in order of completion: the first is the one to forget when full. */
  readonly #doneOrder = new KeyQueue((key, expiresAt) => this.#entries.get(key) === expiresAt, this.#entries);
  /** The objects of ordered events, by their key, in order of first claim. */
  readonly #objects = new Map<string, ObjectRecord>();
  readonly #sweepIntervalMs: number;
  #nextSweepAt = -Infinity;
  #tokenPrefix: string | undefined;
  #claims = 0;

  /** Checks the options once; throws `WebhookOptionsError`. */
  constructor(options: MemoryDedupStoreOptions = {}) {
    checkOptionsObject('MemoryDedupStore', options);
    const { maxEntries = 100_000, sweepIntervalMs = 60_000, now = Date.now } = options;
    if (!Number.isSafeInteger(maxEntries) || maxEntries < 1) {
      throw new WebhookOptionsError('svc-webhooks: maxEntries must be a positive integer');
    }
    checkDuration('sweepIntervalMs', sweepIntervalMs, MAX_TIMER_MS);
    checkCallback('now', now);
    this.#maxEntries = maxEntries;
    this.#now = now;
    this.#sweepIntervalMs = sweepIntervalMs;
    answerAtOnce(this, MemoryDedupStore.prototype, {
      begin: this.#begin,
      complete: this.#complete,
      release: this.#release,
      beginInOrder: this.#beginInOrder,
      completeInOrder: this.#completeInOrder,
      releaseInOrder: this.#releaseInOrder,
    });
  }

  /** How many ids are held, leased or done, expired ones not yet swept included. */
  get size(): number {
    return this.#entries.size;
  }

  // Each method answers its operation (below) as a settled promise; a claim calls the operations at once.

  /** Claims `key` for `leaseMs`, unless another delivery holds it or it is done; see `DedupStore.begin`. */
  begin(key: string, leaseMs: number): Promise<BeginResult> {
    return settledWith(this.#begin, key, leaseMs);
  }

  /** Marks `key` done for `retentionMs` if `token` still holds its lease; see `DedupStore.complete`. */
  complete(key: string, token: string, retentionMs: number): Promise<boolean> {
    return settledWith(this.#complete, key, token, retentionMs);
  }

  /** Drops the lease on `key` if `token` still holds it; see `DedupStore.release`. */
  release(key: string, token: string): Promise<boolean> {
    return settledWith(this.#release, key, token);
  }

  /** Moves the end of the lease on `key` to `leaseMs` from now if `token` still holds it; see `DedupStore.renew`. */
  renew(key: string, token: string, leaseMs: number): Promise<boolean> {
    return settledWith(this.#renew, key, token, leaseMs);
  }

  /** As `begin`, leasing the event's object too; see `OrderingDedupStore.beginInOrder`. */
  beginInOrder(key: string, order: EventOrder, leaseMs: number): Promise<OrderedBeginResult> {
    return settledWith(this.#beginInOrder, key, order, leaseMs);
  }

  /** As `complete`, recording the object's version; see `OrderingDedupStore.completeInOrder`. */
  completeInOrder(key: string, order: EventOrder, token: string, retentionMs: number): Promise<boolean> {
    return settledWith(this.#completeInOrder, key, order, token, retentionMs);
  }

  /** As `release`, dropping the object's lease; see `OrderingDedupStore.releaseInOrder`. */
  releaseInOrder(key: string, order: EventOrder, token: string): Promise<boolean> {
    return settledWith(this.#releaseInOrder, key, order, token);
  }

  /** As `renew`, with the object's lease; see `OrderingDedupStore.renewInOrder`. */
  renewInOrder(key: string, order: EventOrder, token: string, leaseMs: number): Promise<boolean> {
    return settledWith(this.#renewInOrder, key, order, token, leaseMs);
  }

  /** Nothing to stop: the store holds no timer. Kept so that code closing the store on shutdown still runs. */
  close(): void {}

  // The operations themselves, answering at once or throwing; the public methods answer them as promises.
  readonly #begin = (key: string, leaseMs: number): BeginResult => {
    checkDuration('leaseMs', leaseMs);
    const now = this.#now();
    if (now >= this.#nextSweepAt) this.#sweep(now);
    const held = this.#entries.get(key);
    if (held === undefined) {
      // Only a new key needs room; an expired one is replaced in its slot.
      this.#makeRoom(now);
    } else if (typeof held === 'number') {
      if (held > now) return DONE;
    } else if (held.expiresAt > now) {
      return IN_PROGRESS;
    }
    const token = this.#newToken();
    this.#lease(key, { token, expiresAt: now + leaseMs });
    return { state: 'claimed', token };
  };

  readonly #beginInOrder = (key: string, order: EventOrder, leaseMs: number): OrderedBeginResult => {
    checkDuration('leaseMs', leaseMs);
    const now = this.#now();
    const held = this.#entries.get(key);
    if (held !== undefined && expiryOf(held) > now) return typeof held === 'number' ? DONE : IN_PROGRESS;
    const object = this.#objects.get(order.key);
    if (object?.token !== undefined && object.leaseExpiresAt > now) return IN_PROGRESS;
    const claimed = this.#begin(key, leaseMs);
    if (claimed.state !== 'claimed') return claimed;
    // Looked up again: the claim's sweep drops a record that holds neither a lease nor a live version.
    const record = this.#objects.get(order.key) ?? this.#newObject(order.key, now);
    record.token = claimed.token;
    record.leaseExpiresAt = now + leaseMs;
    const stale = record.version !== undefined && record.versionExpiresAt > now && record.version > order.version;
    return { state: 'claimed', token: claimed.token, stale };
  };

  readonly #completeInOrder = (key: string, order: EventOrder, token: string, retentionMs: number): boolean => {
    if (!this.#complete(key, token, retentionMs)) return false;
    const now = this.#now();
    // Recorded even where the object's lease ran out meanwhile, or the record was dropped: the event is done.
    const record = this.#objects.get(order.key) ?? this.#newObject(order.key, now);
    if (record.token === token) record.token = undefined;
    if (record.version === undefined || record.versionExpiresAt <= now || record.version <= order.version) {
      record.version = order.version;
      record.versionExpiresAt = now + retentionMs;
    }
    return true;
  };

  readonly #releaseInOrder = (key: string, order: EventOrder, token: string): boolean => {
    const released = this.#release(key, token);
    const record = this.#objects.get(order.key);
    if (record?.token === token) record.token = undefined;
    return released;
  };

  readonly #renewInOrder = (key: string, order: EventOrder, token: string, leaseMs: number): boolean => {
    if (!this.#renew(key, token, leaseMs)) return false;
    const record = this.#objects.get(order.key);
    if (record?.token === token) record.leaseExpiresAt = this.#now() + leaseMs;
    return true;
  };

  /** A record for an object not held yet, made room for: an object whose lease ran out and whose version expired, or else the oldest without a live lease. */
  #newObject(objectKey: string, now: number): ObjectRecord {
    if (this.#objects.size >= this.#maxEntries) {
      let oldest: string | undefined;
      for (const [key, record] of this.#objects) {
        if (record.token !== undefined && record.leaseExpiresAt > now) continue;
        oldest ??= key;
        if (record.version === undefined || record.versionExpiresAt <= now) {
          oldest = key;
          break;
        }
      }
      if (oldest === undefined) throw new WebhookDedupError('dedup_unavailable', 'the memory dedup store is full of live leases; retry later');
      this.#objects.delete(oldest);
    }
    const record: ObjectRecord = { version: undefined, versionExpiresAt: 0, token: undefined, leaseExpiresAt: 0 };
    this.#objects.set(objectKey, record);
    return record;
  }

  readonly #complete = (key: string, token: string, retentionMs: number): boolean => {
    checkDuration('retentionMs', retentionMs);
    const now = this.#now();
    if (!this.#leaves(key, token, now)) return false;
    // Replaced where it is: a delete and a set would leave a deleted slot in the map until it rehashes.
    const expiresAt = now + retentionMs;
    this.#entries.set(key, expiresAt);
    this.#doneOrder.push(key, expiresAt);
    return true;
  };

  readonly #release = (key: string, token: string): boolean => {
    if (!this.#leaves(key, token, this.#now())) return false;
    this.#entries.delete(key);
    return true;
  };

  readonly #renew = (key: string, token: string, leaseMs: number): boolean => {
    checkDuration('leaseMs', leaseMs);
    const now = this.#now();
    if (!this.#leaves(key, token, now)) return false;
    // Queued again, last: the first lease stays the oldest claim or renewal.
    this.#lease(key, { token, expiresAt: now + leaseMs });
    return true;
  };

  /**
   * Whether `token` holds a live lease on `key` at `now`; an expired lease is held by nobody. If it does,
   * the lease is about to be replaced or deleted: its slot in the queue goes now if it is the newest
   * there (a claim settled at once), and is otherwise left stale.
   */
  #leaves(key: string, token: string, now: number): boolean {
    const lease = this.#entries.get(key);
    if (typeof lease !== 'object' || lease.token !== token || lease.expiresAt <= now) return false;
    this.#leaseOrder.dropNewest(key, lease.expiresAt);
    return true;
  }

  #lease(key: string, lease: Lease): void {
    this.#entries.set(key, lease);
    this.#leaseOrder.push(key, lease.expiresAt);
  }

  /**
   * A token no other claim of this store gets, nor likely any other store's: a random prefix of the
   * store's own and a count. The prefix is drawn at the first claim rather than in the constructor, as
   * a Worker refuses random values in its global scope, where the store may be created.
   */
  #newToken(): string {
    this.#tokenPrefix ??= `${randomHex(16)}-`;
    // Equivalent: counting down gives every claim a token of its own as well.
    // Stryker disable next-line UpdateOperator
    return this.#tokenPrefix + (this.#claims++).toString(36);
  }

  /** Frees one slot if the store is full, losing no live lease; throws `dedup_unavailable` if it cannot. */
  #makeRoom(now: number): void {
    if (this.size < this.#maxEntries) return;
    const oldestLease = this.#leaseOrder.first();
    const oldest = oldestLease !== undefined && expiryOf(this.#entries.get(oldestLease)!) <= now ? oldestLease : this.#doneOrder.first();
    if (oldest === undefined) {
      throw new WebhookDedupError('dedup_unavailable', 'the memory dedup store is full of live leases; retry later');
    }
    // Deleted from the map, a key is stale in its queue, which drops it when next met.
    this.#entries.delete(oldest);
  }

  #sweep(now: number): void {
    this.#nextSweepAt = now + this.#sweepIntervalMs;
    // Deleting the current entry while iterating a Map is safe.
    for (const [key, held] of this.#entries) if (expiryOf(held) <= now) this.#entries.delete(key);
    for (const [key, record] of this.#objects) if (record.leaseExpiresAt <= now && record.versionExpiresAt <= now) this.#objects.delete(key);
    this.#leaseOrder.compact();
    this.#doneOrder.compact();
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

/** `bytes` random bytes in hex, from Web Crypto, which every runtime has (Node's since 19). */
function randomHex(bytes: number): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(bytes)), (byte) => byte.toString(16).padStart(2, '0')).join('');
}
