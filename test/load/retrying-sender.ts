/**
 * The service's side of the test: it delivers each signed event, some of them
 * as two copies sent at the same moment (to two instances, or twice to one),
 * and retries a copy until it gets a 2xx, with time compressed: a 409's
 * `Retry-After` second lasts a few milliseconds, and a 5xx waits a few more
 * per attempt. At most `workers` events are delivered at once, so at most
 * twice as many requests are in flight; fetch keeps connections alive.
 */
import type { SignedRequest } from '../helpers/signed-request.js';

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
  /** The wait after a 5xx, times the attempt number (at most 8). */
  readonly backoffMs: number;
  /**
   * `'each-copy'`: every copy retries until it got its own 2xx, as two
   * independent deliveries of one event would. `'event'`: the copies stop
   * once any of them got a 2xx, as a sender does that no longer retries an
   * event it has an answer for.
   */
  readonly retryUntil: 'each-copy' | 'event';
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
  /** The most attempts any copy needed. */
  maxAttempts = 0;
}

export async function deliverAll(deliveries: readonly Delivery[], options: SenderOptions): Promise<SenderCounts> {
  const counts = new SenderCounts();
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < deliveries.length) {
      const delivery = deliveries[next++]!;
      const event = { answered: false };
      await Promise.all(delivery.copies.map((url) => deliverCopy(url, delivery, event, counts, options)));
    }
  };
  await Promise.all(Array.from({ length: options.workers }, worker));
  return counts;
}

async function deliverCopy(
  url: string,
  { id, request }: Delivery,
  event: { answered: boolean },
  counts: SenderCounts,
  options: SenderOptions,
): Promise<void> {
  const stopped = (): boolean => options.retryUntil === 'event' && event.answered;
  for (let attempt = 1; attempt <= options.maxAttempts; attempt++) {
    counts.maxAttempts = Math.max(counts.maxAttempts, attempt);
    counts.requests += 1;
    const response = await fetch(url, { method: 'POST', body: request.body, headers: request.headers });
    const body = await response.text();
    if (response.ok) {
      if (response.status === 204) counts.processed += 1;
      else if (response.status === 200 && isDoneAnswer(body)) counts.doneAnswers += 1;
      else throw new Error(`${id}: unexpected ${response.status} ${body}`);
      event.answered = true;
      return;
    }
    const wait = waitBeforeRetry(response, body, attempt, options, id, counts);
    if (stopped()) return;
    await sleep(wait);
    if (stopped()) return;
  }
  throw new Error(`${id} was lost: no 2xx from ${url} after ${options.maxAttempts} attempts`);
}

/** Counts the refusal and answers how long to wait before the next attempt. */
function waitBeforeRetry(
  response: Response,
  body: string,
  attempt: number,
  options: SenderOptions,
  id: string,
  counts: SenderCounts,
): number {
  switch (response.status) {
    case 409: {
      counts.inProgress += 1;
      const seconds = Number(response.headers.get('retry-after'));
      if (!Number.isInteger(seconds) || seconds < 1) throw new Error(`${id}: 409 without a Retry-After in seconds`);
      return seconds * options.msPerRetryAfterSecond;
    }
    case 503:
      counts.unavailable += 1;
      break;
    case 500:
      counts.handlerFailures += 1;
      break;
    default:
      throw new Error(`${id}: unexpected ${response.status} ${body}`);
  }
  return options.backoffMs * Math.min(attempt, 8);
}

function isDoneAnswer(body: string): boolean {
  return (JSON.parse(body) as { duplicate?: unknown }).duplicate === true;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
