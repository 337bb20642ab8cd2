/**
 * The storage side of exactly-once processing, keyed on the event id.
 *
 * Lifecycle of an id: absent -> (begin) leased -> (complete) done, or
 * leased -> (release, or the lease running out) absent again; while leased,
 * renew moves the lease's end. A lease is held under a token, so a delivery
 * whose lease expired cannot renew, complete or release the claim of the
 * delivery that took over.
 */

/** The answer of `begin`. */
export type BeginResult =
  /** This delivery holds the lease; process the event, then complete or release. */
  | { readonly state: 'claimed'; readonly token: string }
  /** Another delivery holds a live lease. */
  | { readonly state: 'in_progress' }
  /** The event was processed already. */
  | { readonly state: 'done' };

export interface DedupStore {
  /** Atomically claims `id` for `leaseMs` milliseconds unless it is leased or done. */
  begin(id: string, leaseMs: number): Promise<BeginResult>;
  /**
   * Marks `id` done for `ttlMs` milliseconds, if `token` still holds the lease.
   * Answers whether it did.
   */
  complete(id: string, token: string, ttlMs: number): Promise<boolean>;
  /** Drops the lease so a retry is processed, if `token` still holds it. Answers whether it did. */
  release(id: string, token: string): Promise<boolean>;
  /**
   * Makes the lease end `leaseMs` milliseconds from now, if `token` still
   * holds a live lease on `id`; answers whether it did. Never revives an
   * expired lease, and never touches an id that is absent or done.
   */
  renew(id: string, token: string, leaseMs: number): Promise<boolean>;
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
