/**
 * Time limits on waits. The waits of every request (a body read, the wait
 * for the store after an answer, a lease's first renewal) share one timer
 * per length: a request adds its deadline to a queue and marks it off when
 * the wait ends, and no request creates a timer only to clear it again.
 */

/** A deadline in a queue: `cancel` once the wait it limits is over, so that it never fires. */
export interface Deadline {
  cancel(): void;
}

// A Worker (workerd) runs a timer in the request that set it and cancels it when that request ends, so
// one request's timer cannot serve the deadlines of others there: each deadline gets a timer of its own.
const timerPerDeadline = (globalThis as { navigator?: { userAgent?: unknown } }).navigator?.userAgent === 'Cloudflare-Workers';

/**
 * Deadlines that all lie `ms` after they start, in the order they started:
 * the first to start is the first due, so one timer, set for the first, is
 * enough. The queue holds each deadline as a number and a callback, the
 * callback dropped when it is cancelled: at thousands of requests a second
 * a deadline of 10 s keeps tens of thousands queued, and objects kept that
 * long would cost the garbage collector more than a timer each.
 */
export class DeadlineQueue {
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
    if (timerPerDeadline) {
      const timer = setTimeout(late, this.ms);
      return { cancel: () => clearTimeout(timer) };
    }
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

/**
 * Resolves to what `promise` settles to, or, once `ms` have passed first, to
 * what `late()` returns; `promise` goes on unobserved then. For the waits of
 * a request gone wrong (a user's `onError`), which are too rare to share a timer.
 */
export async function beforeDeadline<T, L>(promise: PromiseLike<T>, ms: number, late: () => L): Promise<T | L> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<L>((resolve) => {
    timer = setTimeout(() => resolve(late()), ms);
  });
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/** Waits for `promise` within a deadline of `queue`: what it settles to, or `late()` once the deadline passed first. */
export function withinDeadline<T, L>(queue: DeadlineQueue, promise: PromiseLike<T>, late: () => L): Promise<T | L> {
  return new Promise<T | L>((resolve, reject) => {
    const deadline = queue.start(() => resolve(late()));
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

/** A timer that does not keep a Node process alive; Workers' and Deno's timers are plain numbers. */
export function unref<T>(timer: T): T {
  const handle = timer as { unref?: () => void };
  if (typeof handle === 'object' && typeof handle.unref === 'function') handle.unref();
  return timer;
}
