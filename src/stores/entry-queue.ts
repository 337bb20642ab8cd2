/**
 * A first-in first-out queue of entries that may go stale while queued (an
 * entry replaced or deleted elsewhere): O(1) to add, and amortised O(1) to
 * drop stale entries and take the oldest current one. A Map's own order would
 * do the same, but finding its first entry steps over every entry deleted
 * since the Map last rehashed: tens of thousands in a full store.
 */
export class EntryQueue<Entry> {
  #items: Array<Entry | undefined> = [];
  #head = 0;
  readonly #isCurrent: (entry: Entry) => boolean;

  /** `isCurrent` tells whether a queued entry still counts; the others are dropped as they are met. */
  constructor(isCurrent: (entry: Entry) => boolean) {
    this.#isCurrent = isCurrent;
  }

  /** Entries queued, stale ones not yet dropped included. */
  get length(): number {
    return this.#items.length - this.#head;
  }

  push(entry: Entry): void {
    this.#items.push(entry);
  }

  /** The oldest current entry, after dropping the stale ones before it; undefined if there is none. */
  first(): Entry | undefined {
    while (this.#head < this.#items.length) {
      const entry = this.#items[this.#head]!;
      if (this.#isCurrent(entry)) return entry;
      this.shift();
    }
    return undefined;
  }

  /** Drops `entry` if it is the newest: one that goes stale right after it was queued (a lease completed at once) leaves no slot behind. */
  dropNewest(entry: Entry): void {
    if (this.#items.length > this.#head && this.#items[this.#items.length - 1] === entry) this.#items.pop();
  }

  /** Drops the oldest entry. */
  shift(): void {
    if (this.#head === this.#items.length) return;
    this.#items[this.#head++] = undefined;
    // Give back the dropped slots once they are most of the array: amortised O(1).
    // Equivalent: when (or whether) the slots are given back changes memory and time only; every slot before head is undefined and never read.
    // Stryker disable next-line all
    if (this.#head * 2 >= this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
  }

  /** Drops every stale entry, keeping the order of the others: O(length). */
  compact(): void {
    const isCurrent = this.#isCurrent;
    this.#items = this.#items.slice(this.#head).filter((entry) => isCurrent(entry!));
    this.#head = 0;
  }
}
