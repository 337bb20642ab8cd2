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

interface Entry extends Deadline {
  readonly at: number;
  late: (() => void) | undefined;
}

// A Worker (workerd) runs a timer in the request that set it and cancels it when that request ends, so
// one request's timer cannot serve the deadlines of others there: each deadline gets a timer of its own.
const timerPerDeadline = (globalThis as { navigator?: { userAgent?: unknown } }).navigator?.userAgent === 'Cloudflare-Workers';

/**
 * Deadlines that all lie `ms` after they start, in the order they started:
 * the first to start is the first due, so one timer, set for the first, is
 * enough. A cancelled deadline stays queued until it would have been due
 * (it costs an object, not a timer).
 */
export class DeadlineQueue {
  readonly ms: number;
  #entries: Entry[] = [];
  #head = 0;
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
    const entry: Entry = {
      at: Date.now() + this.ms,
      late,
      cancel() {
        entry.late = undefined;
      },
    };
    this.#entries.push(entry);
    if (this.#timer === undefined) this.#arm(this.ms);
    return entry;
  }

  #arm(delay: number): void {
    this.#timer = unref(setTimeout(() => this.#fire(), delay));
  }

  #fire(): void {
    this.#timer = undefined;
    const now = Date.now();
    const entries = this.#entries;
    while (this.#head < entries.length && entries[this.#head]!.at <= now) {
      const { late } = entries[this.#head]!;
      entries[this.#head++] = undefined as unknown as Entry;
      late?.();
    }
    if (this.#head === entries.length) {
      this.#entries = [];
      this.#head = 0;
      return;
    }
    // Compact now and then, so the array does not keep every deadline ever started.
    if (this.#head > 1024 && this.#head * 2 > entries.length) {
      this.#entries = entries.slice(this.#head);
      this.#head = 0;
    }
    this.#arm(Math.max(1, this.#entries[this.#head]!.at - now));
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
