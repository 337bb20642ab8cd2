/**
 * A first-in first-out queue of keys, each queued with a stamp (the expiry
 * of the state it stood for), that may go stale while queued: the key's
 * state replaced or deleted elsewhere. O(1) to add, and amortised O(1) to
 * drop stale keys and take the oldest current one.
 *
 * A Map's own order would do the same, but finding its first entry steps
 * over every entry deleted since the Map last rehashed: tens of thousands in
 * a full store. Keys and stamps are kept in two arrays rather than as pairs,
 * so that a queued key costs two array slots and no object.
 *
 * A stale slot whose key later gets a state of the same stamp counts as
 * current again. Only the last slot of a key can stand for its state, as
 * every new state is queued, so compacting keeps that one alone: the queue
 * stays bounded whatever the clock does.
 */
export class KeyQueue {
  #keys: Array<string | undefined> = [];
  #stamps: number[] = [];
  #head = 0;
  readonly #isCurrent: (key: string, stamp: number) => boolean;
  readonly #held: { readonly size: number };

  /**
   * `isCurrent` tells whether a key queued with a stamp still counts; the others are dropped as they are
   * met. `held` is what holds the keys that may be current (a Map): past twice its size and `SLACK`
   * slots, a push compacts.
   */
  constructor(isCurrent: (key: string, stamp: number) => boolean, held: { readonly size: number }) {
    this.#isCurrent = isCurrent;
    this.#held = held;
  }

  /** Stale slots a queue may hold beyond twice the keys held before a push compacts it. */
  static readonly SLACK = 1024;

  /** Keys queued, stale ones not yet dropped included. */
  get length(): number {
    return this.#keys.length - this.#head;
  }

  /** Queues `key` with `stamp`, last; then compacts the queue if stale slots have piled up. */
  push(key: string, stamp: number): void {
    this.#keys.push(key);
    this.#stamps.push(stamp);
    if (this.length > 2 * this.#held.size + KeyQueue.SLACK) this.compact();
  }

  /** The oldest current key, after dropping the stale ones before it; undefined if there is none. */
  first(): string | undefined {
    while (this.#head < this.#keys.length) {
      const key = this.#keys[this.#head]!;
      if (this.#isCurrent(key, this.#stamps[this.#head]!)) return key;
      this.#dropFirst();
    }
    return undefined;
  }

  /** Drops `key` queued with `stamp` if it is the newest: a state that goes stale right after it was queued (a lease completed at once) leaves no slot behind. */
  dropNewest(key: string, stamp: number): void {
    // No bound check: a slot before the head, or before the first, holds undefined, never a key.
    const last = this.#keys.length - 1;
    if (this.#keys[last] === key && this.#stamps[last] === stamp) {
      this.#keys.pop();
      this.#stamps.pop();
    }
  }

  /** Drops the oldest key, of a queue that holds one. */
  #dropFirst(): void {
    this.#keys[this.#head++] = undefined;
    // Give back the dropped slots once they are most of the arrays: amortised O(1).
    // Equivalent: when (or whether) the slots are given back changes memory and time only; every slot before head is undefined and never read.
    // Stryker disable next-line all
    if (this.#head * 2 >= this.#keys.length) {
      this.#keys = this.#keys.slice(this.#head);
      this.#stamps = this.#stamps.slice(this.#head);
      this.#head = 0;
    }
  }

  /** Drops every stale key, and every slot of a key but its last, keeping the order of the others: O(length). */
  compact(): void {
    const seen = new Set<string>();
    const keys: string[] = [];
    const stamps: number[] = [];
    for (let i = this.#keys.length - 1; i >= this.#head; i--) {
      const key = this.#keys[i]!;
      if (seen.has(key)) continue;
      seen.add(key);
      if (this.#isCurrent(key, this.#stamps[i]!)) {
        keys.push(key);
        stamps.push(this.#stamps[i]!);
      }
    }
    this.#keys = keys.reverse();
    this.#stamps = stamps.reverse();
    this.#head = 0;
  }
}
