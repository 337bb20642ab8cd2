/**
 * The service's side of the ordering runs: `workers` concurrent senders take
 * the copies in their shuffled order, and deliver each on its own until it
 * gets a 2xx, whatever the other copies got: any other answer (a 409
 * included), a connection refused or an answer later than the window
 * counts as failed, and the copy is sent again after a short random delay.
 * Each attempt is the testing kit's own (`postWithAnswer`).
 */
import { postWithAnswer } from '../../../src/testing/delivery.js';
import type { OrderedCopy } from './ordered-events.js';
import type { SenderOptions } from './retrying-sender.js';
import { draw } from './seeded-random.js';

/** `workers` senders at once; `answerWindowMs` the service's 10 s: an attempt answered later failed, and is retried though the receiver may still run it. */
export interface OrderingSenderOptions extends Pick<SenderOptions, 'workers' | 'answerWindowMs'> {
  /** The longest delay before a retry; each is drawn from the seed between a fifth of it and it. */
  readonly maxDelayMs: number;
  /** How long one copy may go without a 2xx before the run fails: the event was lost. */
  readonly giveUpAfterMs: number;
}

/**
 * How an attempt ended: a 2xx `accepted` (204 handled, 202 queued), `stale`
 * (200 `stale: true`) or `duplicate` (200 `duplicate: true`); else its
 * status (`'409'`: another delivery of the event or of its object ran), or
 * `unanswered` (a connection refused or reset, or no answer in the window).
 */
export type AttemptEnd = 'accepted' | 'stale' | 'duplicate' | 'unanswered' | `${number}`;

/** What the receivers answered, over every attempt. */
export class OrderingAnswers {
  /** Copies delivered to the end (a 2xx). */
  delivered = 0;
  attempts = 0;
  readonly #ends = new Map<AttemptEnd, number>();
  /** The events answered stale at least once. */
  readonly staleEvents = new Set<string>();

  add(end: AttemptEnd): void {
    this.#ends.set(end, this.count(end) + 1);
  }

  /** The attempts that ended so. */
  count(end: AttemptEnd): number {
    return this.#ends.get(end) ?? 0;
  }

  /** The statuses other than 2xx and 409, with their counts. */
  get failures(): Array<[AttemptEnd, number]> {
    return [...this.#ends].filter(([end]) => /^\d+$/.test(end) && end !== '409');
  }
}

/** Starts the senders; `answers` fill as they go, and `done` resolves to them once every copy got its 2xx. */
export function startSending(
  copies: readonly OrderedCopy[],
  target: string,
  seed: number,
  options: OrderingSenderOptions,
): { readonly answers: OrderingAnswers; readonly done: Promise<OrderingAnswers> } {
  const answers = new OrderingAnswers();
  let next = 0;
  const sender = async (): Promise<void> => {
    while (next < copies.length) await deliver(copies[next++]!, target, seed, options, answers);
  };
  const done = Promise.all(Array.from({ length: options.workers }, sender)).then(() => answers);
  return { answers, done };
}

async function deliver({ event, copy }: OrderedCopy, target: string, seed: number, options: OrderingSenderOptions, answers: OrderingAnswers): Promise<void> {
  const deadline = performance.now() + options.giveUpAfterMs;
  for (let attempt = 0; performance.now() < deadline; attempt++) {
    answers.attempts += 1;
    const { attempt: result, answer } = await postWithAnswer(target, event.request.body, event.request.headers, options.answerWindowMs);
    const status = result.status;
    if (status !== undefined && status >= 200 && status < 300) {
      answers.delivered += 1;
      const end = result.duplicate ? 'duplicate' : isStale(answer) ? 'stale' : 'accepted';
      answers.add(end);
      if (end === 'stale') answers.staleEvents.add(event.id);
      return;
    }
    answers.add(status === undefined ? 'unanswered' : `${status}`);
    const delay = options.maxDelayMs * (0.2 + 0.8 * draw(seed, 'retry', event.id, copy, attempt));
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
  throw new Error(`${event.id} (copy ${copy}) was lost: no 2xx from ${target} in ${options.giveUpAfterMs} ms`);
}

function isStale(answer: string | undefined): boolean {
  try {
    return (JSON.parse(answer ?? '') as { stale?: unknown }).stale === true;
  } catch {
    return false;
  }
}

/** The answers in one line, for the run's report. */
export function describeAnswers(answers: OrderingAnswers): string {
  const failed = answers.failures.map(([status, count]) => `${count} × ${status}`).join(', ') || 'none';
  return (
    `${answers.delivered} deliveries in ${answers.attempts} attempts; answered ${answers.count('accepted')} accepted, ` +
    `${answers.count('stale')} stale (${answers.staleEvents.size} events), ${answers.count('duplicate')} duplicate; ` +
    `${answers.count('409')} × 409, other failures ${failed}, ${answers.count('unanswered')} unanswered`
  );
}
