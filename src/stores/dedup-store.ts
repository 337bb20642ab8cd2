/**
 * The storage side of exactly-once processing, keyed on a delivery's
 * `dedupKey`: the event id scoped by the secret that verified it.
 *
 * Lifecycle of a key: absent -> (begin) leased -> (complete) done, or
 * leased -> (release, or the lease running out) absent again; while leased,
 * renew moves the lease's end. A lease is held under a token, so a delivery
 * whose lease expired cannot renew, complete or release the claim of the
 * delivery that took over.
 *
 * A store that also orders events (`OrderingDedupStore`) holds, beside each
 * key, the object each ordered event is about: the highest version of it
 * processed, and a lease of its own, so that events of one object run one
 * at a time.
 */
import type { EventOrder } from '../core/event-order.js';

/** The answer of `begin`. */
export type BeginResult =
  | {
      /** This delivery holds the lease; process the event, then complete or release. */
      readonly state: 'claimed';
      /** What this delivery's complete, release and renew name its lease by. */
      readonly token: string;
    }
  | {
      /** Another delivery holds a live lease. */
      readonly state: 'in_progress';
    }
  | {
      /** The event was processed already. */
      readonly state: 'done';
    };

/** The four operations of a `DedupStore`: what `dedup.onError` and the store channel name when one fails. */
export type StoreOperation = 'begin' | 'complete' | 'release' | 'renew';

/**
 * Where a receiver or a worker records which events it processed. Keys are
 * a delivery's `dedupKey`. Implement it for another database by the
 * contract of each method; svc-webhooks ships `MemoryDedupStore`,
 * `RedisDedupStore`, `PostgresDedupStore` and `SqliteDedupStore`.
 */
export interface DedupStore {
  /** Atomically claims `key` for `leaseMs` milliseconds unless it is leased or done. */
  begin(key: string, leaseMs: number): Promise<BeginResult>;
  /**
   * Marks `key` done for `retentionMs` milliseconds, if `token` still holds
   * the lease. Answers whether it did.
   */
  complete(key: string, token: string, retentionMs: number): Promise<boolean>;
  /** Drops the lease so a retry is processed, if `token` still holds it. Answers whether it did. */
  release(key: string, token: string): Promise<boolean>;
  /**
   * Makes the lease end `leaseMs` milliseconds from now, if `token` still
   * holds a live lease on `key`; answers whether it did. Never revives an
   * expired lease, and never touches a key that is absent or done.
   */
  renew(key: string, token: string, leaseMs: number): Promise<boolean>;
}

/** The answer of `beginInOrder`: `begin`'s, where a claim also tells whether its event is stale. */
export type OrderedBeginResult =
  | {
      /** This delivery holds the lease on the event and on its object; process it, then complete or release. */
      readonly state: 'claimed';
      /** What this delivery's complete, release and renew name its leases by. */
      readonly token: string;
      /** Whether a higher version of the object was processed already. */
      readonly stale: boolean;
    }
  | {
      /** Another delivery holds a live lease on the event, or on another event of its object. */
      readonly state: 'in_progress';
    }
  | {
      /** The event was processed already. */
      readonly state: 'done';
    };

/**
 * A `DedupStore` that also puts events about one object in order: the
 * receivers' and workers' `ordering` option needs one. `order` is the
 * event's object (its key, scoped as dedup keys are) and version. Each
 * method does, in one atomic step of the store, what its plain sibling does
 * to `key` and the following to the object. A custom store written for
 * 1.0 keeps working without them, and without `ordering`.
 */
export interface OrderingDedupStore extends DedupStore {
  /**
   * As `begin`, and answers `in_progress` while another event's live lease
   * holds the object; a claim leases the object too, under the same token,
   * and says whether a version above `order.version` was recorded. Equal
   * versions are not stale.
   */
  beginInOrder(key: string, order: EventOrder, leaseMs: number): Promise<OrderedBeginResult>;
  /**
   * As `complete`, and in the same step records `order.version` as the
   * object's, unless a higher one is (for `retentionMs`), and drops the
   * object's lease if `token` holds it. Records nothing when `token` no
   * longer holds the event.
   */
  completeInOrder(key: string, order: EventOrder, token: string, retentionMs: number): Promise<boolean>;
  /** As `release`, and drops the object's lease if `token` holds it, recording no version. */
  releaseInOrder(key: string, order: EventOrder, token: string): Promise<boolean>;
  /** As `renew`, and moves the end of the object's lease with the event's. */
  renewInOrder(key: string, order: EventOrder, token: string, leaseMs: number): Promise<boolean>;
}

/** The methods a store needs for `ordering`, besides those of a `DedupStore`. */
const ORDERING_METHODS = ['beginInOrder', 'completeInOrder', 'releaseInOrder', 'renewInOrder'] as const;

/** The methods of an `OrderingDedupStore` that `store` lacks: none for one that can order. */
export function missingOrderingMethods(store: DedupStore): string[] {
  return ORDERING_METHODS.filter((name) => typeof (store as Partial<OrderingDedupStore>)[name] !== 'function');
}

/** Whether `value` has the four methods of a `DedupStore`: a caller's object is checked once, at creation. */
export function isDedupStore(value: unknown): value is DedupStore {
  const store = value as Partial<DedupStore> | null;
  return (
    typeof store === 'object' &&
    store !== null &&
    typeof store.begin === 'function' &&
    typeof store.complete === 'function' &&
    typeof store.release === 'function' &&
    typeof store.renew === 'function'
  );
}

/**
 * The operations of a store that answers within this process: a claim calls
 * them rather than the `DedupStore` methods, whose promises would each cost
 * the delivery a turn of the event loop. Each answers what its method
 * resolves to, and throws where its method rejects. Not exported from any
 * entry: the package's own stores alone register them.
 */
export interface AnswersAtOnce {
  begin(key: string, leaseMs: number): BeginResult;
  complete(key: string, token: string, retentionMs: number): boolean;
  release(key: string, token: string): boolean;
}

/** The operations of an `OrderingDedupStore` that answers within this process, as `AnswersAtOnce`. */
export interface OrderedAnswersAtOnce {
  beginInOrder(key: string, order: EventOrder, leaseMs: number): OrderedBeginResult;
  completeInOrder(key: string, order: EventOrder, token: string, retentionMs: number): boolean;
  releaseInOrder(key: string, order: EventOrder, token: string): boolean;
}

// Registered by a symbol of the global registry, so that a store made by one copy of the package (its
// root entry, say) answers at once to the claims of another (the Fetch entry, bundled apart).
const AT_ONCE = Symbol.for('svc-webhooks.dedup-store.answers-at-once');

/** The methods a store's operations stand for, and the operations. */
interface Registered {
  readonly methods: Partial<Record<keyof AnswersAtOnce | keyof OrderedAnswersAtOnce, unknown>>;
  readonly operations: AnswersAtOnce & Partial<OrderedAnswersAtOnce>;
}

/**
 * Registers the operations of `store` that answer at once, plain and, for a store that orders, ordered,
 * for as long as its methods are `methods`, its class's own.
 */
export function answerAtOnce(store: DedupStore, methods: Registered['methods'], operations: Registered['operations']): void {
  Object.defineProperty(store, AT_ONCE, { value: { methods, operations } satisfies Registered });
}

/**
 * The operations of `store` that answer at once, if it registered them and
 * its methods are still those they stand for: a method replaced since (a
 * subclass's override, a test's spy) is called as any store's method is.
 */
export function answersAtOnce(store: DedupStore): AnswersAtOnce | undefined {
  const registered = (store as { [AT_ONCE]?: Registered })[AT_ONCE];
  if (registered === undefined) return undefined;
  const { methods } = registered;
  return store.begin === methods.begin && store.complete === methods.complete && store.release === methods.release ? registered.operations : undefined;
}

/** The ordered operations of `store` that answer at once, as `answersAtOnce` answers the plain ones. */
export function orderedAnswersAtOnce(store: OrderingDedupStore): OrderedAnswersAtOnce | undefined {
  const registered = (store as { [AT_ONCE]?: Registered })[AT_ONCE];
  if (registered === undefined) return undefined;
  const { methods, operations } = registered;
  if (operations.beginInOrder === undefined || operations.completeInOrder === undefined || operations.releaseInOrder === undefined) return undefined;
  const current = store.beginInOrder === methods.beginInOrder && store.completeInOrder === methods.completeInOrder && store.releaseInOrder === methods.releaseInOrder;
  return current ? (operations as OrderedAnswersAtOnce) : undefined;
}
