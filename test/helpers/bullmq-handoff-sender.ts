/**
 * The service's side of the handoff runs: every copy of an event is a
 * delivery of its own, retried until it gets its own 2xx (202 queued, or
 * the duplicate's 200), whatever the other copy got; an attempt not
 * answered within the answer window counts as failed. Unlike the sender of
 * test/load, it takes 202 and times every answer, for the answer
 * percentiles. Waits are compressed: a `Retry-After` second lasts
 * `msPerRetryAfterSecond`.
 */
import { performance } from 'node:perf_hooks';
import type { Delivery } from './load/retrying-sender.js';

export interface HandoffSenderOptions {
  /** Events delivered at once. */
  readonly workers: number;
  /** Attempts of one copy before the run fails: the event was lost. */
  readonly maxAttempts: number;
  readonly msPerRetryAfterSecond: number;
  /** The wait after a failed attempt without Retry-After, times the attempt number (at most 8). */
  readonly backoffMs: number;
  /** The service's 10 s: an attempt answered later failed, and the sender hangs up. */
  readonly answerWindowMs: number;
  /**
   * Events started per second at most, as a sender spreads its deliveries:
   * a sender that keeps every worker busy measures the receivers' queue of
   * requests, not their answer time. @default unpaced
   */
  readonly perSecond?: number;
}

/** What the receivers answered, and how fast. */
export interface HandoffAnswers {
  readonly byStatus: Map<number | 'late', number>;
  /** The time to answer of every attempt answered within the window, in milliseconds. */
  readonly latencies: number[];
}

export async function sendAll(deliveries: readonly Delivery[], options: HandoffSenderOptions): Promise<HandoffAnswers> {
  const answers: HandoffAnswers = { byStatus: new Map(), latencies: [] };
  const queue = [...deliveries];
  const started = performance.now();
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let delivery = queue.shift(); delivery !== undefined; delivery = queue.shift()) {
      const due = options.perSecond === undefined ? 0 : started + (next++ * 1000) / options.perSecond - performance.now();
      if (due > 0) await new Promise((resolve) => setTimeout(resolve, due));
      const { id, request } = delivery;
      await Promise.all(delivery.copies.map((url) => deliverCopy(url, id, request, answers, options)));
    }
  };
  await Promise.all(Array.from({ length: options.workers }, worker));
  return answers;
}

async function deliverCopy(url: string, id: string, { body, headers }: Delivery['request'], answers: HandoffAnswers, options: HandoffSenderOptions): Promise<void> {
  for (let attempt = 1; attempt <= options.maxAttempts; attempt++) {
    const started = performance.now();
    let status: number | 'late';
    let retryAfter: string | null = null;
    try {
      const response = await fetch(url, { method: 'POST', body, headers, signal: AbortSignal.timeout(options.answerWindowMs) });
      await response.arrayBuffer();
      status = response.status;
      retryAfter = response.headers.get('retry-after');
      answers.latencies.push(performance.now() - started);
    } catch (error) {
      if (!(error instanceof DOMException && error.name === 'TimeoutError')) throw error;
      status = 'late';
    }
    answers.byStatus.set(status, (answers.byStatus.get(status) ?? 0) + 1);
    if (status === 202 || status === 200) return;
    if (status !== 'late' && status !== 409 && status !== 503) throw new Error(`${id}: unexpected ${status} from ${url}`);
    const seconds = Number(retryAfter);
    await new Promise((resolve) =>
      setTimeout(resolve, Number.isInteger(seconds) && seconds > 0 ? seconds * options.msPerRetryAfterSecond : options.backoffMs * Math.min(attempt, 8)),
    );
  }
  throw new Error(`${id} was lost: no 2xx from ${url} after ${options.maxAttempts} attempts`);
}

