/**
 * Time limits on waits: the one mechanism by which the receiver, the secret
 * lookup, the stores and the lease stop waiting. A wait of a fixed length
 * that many requests take (a body read, the wait for the store after an
 * answer, a lease's first renewal, a store command) joins a `DeadlineQueue`
 * of that length, which runs one timer for all of them; a rare or
 * odd-length wait gets a timer of its own from `after`. No timer keeps a
 * Node process alive.
 */

/** A deadline: `cancel` once the wait it limits is over, so that it never fires. */
export interface Deadline {
  cancel(): void;
}

// A Worker (workerd) runs a timer in the request that set it and cancels it when that request ends, so
// one request's timer cannot serve the deadlines of others there: each deadline gets a timer of its own.
const timerPerDeadline = (globalThis as { navigator?: { userAgent?: unknown } }).navigator?.userAgent === 'Cloudflare-Workers';

/** Calls `late` in `ms` unless cancelled first, on a timer of its own that does not keep a Node process alive. */
export function after(ms: number, late: () => void): Deadline {
  const timer = unref(setTimeout(late, ms));
  return { cancel: () => clearTimeout(timer) };
}

/**
 * Deadlines that all lie `ms` after they start, in the order they started:
 * the first to start is the first due, so one timer, set for the first, is
 * enough. The queue holds each deadline as a number and a callback, the
 * callback dropped when it is cancelled: at thousands of requests a second
 * a deadline of 10 s keeps tens of thousands queued, and objects kept that
 * long would cost the garbage collector more than a timer each.
 */
export class DeadlineQueue implements Deadlines {
  readonly ms: number;
  /** When each queued deadline is due, by `Date.now()`, and what it calls then (`undefined` once cancelled). */
  #at: number[] = [];
  #late: Array<(() => void) | undefined> = [];
  #head = 0;
  /** The sequence number of `#at[0]`: a deadline's index is its number minus this. */
  #base = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;

  /** `ms`, whole milliseconds up to `MAX_TIMER_MS`, is checked by the caller. */
  constructor(ms: number) {
    this.ms = ms;
  }

  /** Calls `late` `ms` from now unless cancelled first. */
  start(late: () => void): Deadline {
    if (timerPerDeadline) return after(this.ms, late);
    const sequence = this.#base + this.#at.length;
    this.#at.push(Date.now() + this.ms);
    this.#late.push(late);
    if (this.#timer === undefined) this.#arm(this.ms);
    return new QueuedDeadline(this, sequence);
  }

  /** Drops the callback of deadline `sequence`, if it is still queued. */
  cancel(sequence: number): void {
    const index = sequence - this.#base;
    if (index >= this.#head) this.#late[index] = undefined;
  }

  #arm(delay: number): void {
    this.#timer = unref(setTimeout(() => this.#fire(), delay));
  }

  #fire(): void {
    this.#timer = undefined;
    const now = Date.now();
    const at = this.#at;
    const lates = this.#late;
    while (this.#head < at.length && at[this.#head]! <= now) {
      const late = lates[this.#head];
      lates[this.#head++] = undefined;
      late?.();
    }
    if (this.#head === at.length) {
      this.#base += this.#head;
      this.#at = [];
      this.#late = [];
      this.#head = 0;
      return;
    }
    // Compact now and then, so the arrays do not keep every deadline ever started.
    // Equivalent: when (or whether) the spent slots are given back changes memory and time only; every slot before head is undefined and never read.
    // Stryker disable next-line all
    if (this.#head > 1024 && this.#head * 2 > at.length) {
      this.#base += this.#head;
      this.#at = at.slice(this.#head);
      this.#late = lates.slice(this.#head);
      this.#head = 0;
    }
    this.#arm(Math.max(1, this.#at[this.#head]! - now));
  }
}

/** A deadline in a queue: its sequence number there. */
class QueuedDeadline implements Deadline {
  readonly #queue: DeadlineQueue;
  readonly #sequence: number;

  constructor(queue: DeadlineQueue, sequence: number) {
    this.#queue = queue;
    this.#sequence = sequence;
  }

  cancel(): void {
    this.#queue.cancel(this.#sequence);
  }
}

/** Where deadlines come from: a `DeadlineQueue`, or a wait's own timer (see `beforeDeadline`). */
export interface Deadlines {
  start(late: () => void): Deadline;
}

/**
 * Resolves to what `promise` settles to, or, once a deadline of `deadlines`
 * passed first, to what `late()` returns (rejects with what it throws);
 * `promise` goes on unobserved then (a rejection after the deadline is caught).
 */
export function withinDeadline<T, L>(deadlines: Deadlines, promise: PromiseLike<T>, late: () => L): Promise<T | L> {
  return new Promise<T | L>((resolve, reject) => {
    const deadline = deadlines.start(() => {
      try {
        resolve(late());
      } catch (error) {
        reject(error);
      }
    });
    promise.then(
      (value) => {
        deadline.cancel();
        resolve(value);
      },
      (error: unknown) => {
        deadline.cancel();
        reject(error);
      },
    );
  });
}

/** Waits for `promise` for at most `ms`, on a timer of its own: see `withinDeadline`. */
export function beforeDeadline<T, L>(promise: PromiseLike<T>, ms: number, late: () => L): Promise<T | L> {
  return withinDeadline({ start: (onLate) => after(ms, onLate) }, promise, late);
}

/** A timer that does not keep a Node process alive; Workers' and Deno's timers are plain numbers. */
export function unref<T>(timer: T): T {
  const handle = timer as { unref?: () => void };
  if (typeof handle.unref === 'function') handle.unref();
  return timer;
}
