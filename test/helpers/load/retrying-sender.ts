/**
 * The service's side of the test, as the service behaves: it delivers each
 * signed event, some of them as two copies sent at the same moment (to two
 * instances, or twice to one), and each copy is a delivery of its own: it
 * is retried until it gets its own 2xx, whatever the other copy got. An
 * attempt not answered within the answer window counts as failed and is
 * retried, though the receiver may still be running it. Time is compressed:
 * a 409's `Retry-After` second lasts a few milliseconds, and a failed
 * attempt waits a few more per attempt. At most `workers` events are
 * delivered at once, so at most twice as many requests are in flight;
 * fetch keeps connections alive. Each attempt is the testing kit's own
 * (`post`): only the policy of retries is the load run's.
 */
import { delivered, describeAttempt, post, type Attempt } from '../../../src/testing/delivery.js';
import type { SignedRequest } from '../signed-request.js';

export interface Delivery {
  readonly id: string;
  readonly request: SignedRequest;
  /** One URL per copy; the copies are sent together. */
  readonly copies: readonly string[];
}

export interface SenderOptions {
  /** Events delivered at once. */
  readonly workers: number;
  /** Attempts of one copy before the run fails: the event was lost. */
  readonly maxAttempts: number;
  /** How long one second of `Retry-After` lasts. */
  readonly msPerRetryAfterSecond: number;
  /** The wait after a failed attempt (5xx or no answer in time), times the attempt number (at most 8). */
  readonly backoffMs: number;
  /** An attempt answered later than this counts as failed (the service's 10 s); the sender hangs up. */
  readonly answerWindowMs: number;
}

/** What the receivers answered, over every attempt. */
export class SenderCounts {
  requests = 0;
  /** 204: the route ran and succeeded. */
  processed = 0;
  /** 200 `{ duplicate: true }`: the event was done already. */
  doneAnswers = 0;
  /** 409 with Retry-After: another delivery held the lease. */
  inProgress = 0;
  /** 503: the dedup store was unavailable. */
  unavailable = 0;
  /** 500: the handler failed. */
  handlerFailures = 0;
  /** No answer within the answer window: the sender hung up. */
  late = 0;
  /** The most attempts any copy needed. */
  maxAttempts = 0;
}

export async function deliverAll(deliveries: readonly Delivery[], options: SenderOptions): Promise<SenderCounts> {
  const counts = new SenderCounts();
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < deliveries.length) {
      const delivery = deliveries[next++]!;
      await Promise.all(delivery.copies.map((url) => deliverCopy(url, delivery, counts, options)));
    }
  };
  await Promise.all(Array.from({ length: options.workers }, worker));
  return counts;
}

async function deliverCopy(url: string, { id, request }: Delivery, counts: SenderCounts, options: SenderOptions): Promise<void> {
  for (let attempt = 1; attempt <= options.maxAttempts; attempt++) {
    counts.maxAttempts = Math.max(counts.maxAttempts, attempt);
    counts.requests += 1;
    const answer = await post(url, request.body, request.headers, options.answerWindowMs);
    if (delivered(answer)) {
      if (answer.status === 204) counts.processed += 1;
      else if (answer.status === 200 && answer.duplicate) counts.doneAnswers += 1;
      else throw new Error(`${id}: unexpected ${describeAttempt(answer)}`);
      return;
    }
    await sleep(waitBeforeRetry(answer, attempt, options, id, counts));
  }
  throw new Error(`${id} was lost: no 2xx from ${url} after ${options.maxAttempts} attempts`);
}

/** Counts the failed attempt and answers how long to wait before the next one. */
function waitBeforeRetry(answer: Attempt, attempt: number, options: SenderOptions, id: string, counts: SenderCounts): number {
  switch (answer.status) {
    case 409: {
      counts.inProgress += 1;
      const seconds = answer.retryAfterSeconds;
      if (seconds === undefined || seconds < 1) throw new Error(`${id}: 409 without a Retry-After in seconds`);
      return seconds * options.msPerRetryAfterSecond;
    }
    case undefined:
      // No answer within the window: late. A connection that failed is no receiver's answer, and fails the run.
      if (!answer.failure!.startsWith('no answer')) throw new Error(`${id}: ${describeAttempt(answer)}`);
      counts.late += 1;
      break;
    case 503:
      counts.unavailable += 1;
      break;
    case 500:
      counts.handlerFailures += 1;
      break;
    default:
      throw new Error(`${id}: unexpected ${describeAttempt(answer)}`);
  }
  return options.backoffMs * Math.min(attempt, 8);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
