/** Building a run's deliveries, and checking and reporting what it did. */
import { afterAll, expect } from 'vitest';
import { signedRequest } from '../signed-request.js';
import type { Delivery, SenderCounts } from './retrying-sender.js';
import { draw } from './seeded-random.js';
import type { SideEffectLedger } from './side-effect-ledger.js';

/**
 * `count` signed events; a `duplicateShare` of them, picked by the seed, go
 * as two simultaneous copies, the others as one; the seed picks each copy's
 * receiver, so both copies may go to the same one.
 */
export function buildDeliveries(seed: number, count: number, duplicateShare: number, receivers: readonly string[]): Delivery[] {
  const ids = Array.from({ length: count }, (_, index) => `evt_${index}`);
  const byDraw = [...ids].sort((a, b) => draw(seed, 'duplicate', a) - draw(seed, 'duplicate', b));
  const duplicated = new Set(byDraw.slice(0, Math.ceil(count * duplicateShare)));
  const pick = (id: string, copy: number): string =>
    receivers[Math.floor(draw(seed, 'receiver', id, copy) * receivers.length)]!;
  return ids.map((id) => ({
    id,
    request: signedRequest({ id, type: 'message.received' }),
    copies: duplicated.has(id) ? [pick(id, 0), pick(id, 1)] : [pick(id, 0)],
  }));
}

/** Every delivered event's side effect happened exactly once, and no other. */
export function expectEachProcessedOnce(deliveries: readonly Delivery[], ledger: SideEffectLedger): void {
  const wrong = deliveries
    .map(({ id }) => ({ id, times: ledger.timesProcessed(id) }))
    .filter(({ times }) => times !== 1);
  expect(wrong.slice(0, 10), `${wrong.length} events not processed exactly once`).toEqual([]);
  expect(ledger.eventsProcessed).toBe(deliveries.length);
}

export function duplicatedCount(deliveries: readonly Delivery[]): number {
  return deliveries.filter((delivery) => delivery.copies.length > 1).length;
}

/** One line saying which paths the run went through, and how often. */
export function report(scenario: string, deliveries: readonly Delivery[], counts: SenderCounts, ledger: SideEffectLedger, ms: number): void {
  console.info(
    `${scenario}: ${deliveries.length} events (${duplicatedCount(deliveries)} sent twice at once), ` +
      `${counts.requests} requests in ${Math.round(ms)} ms; answers: ${counts.processed} processed (204), ` +
      `${counts.doneAnswers} done (200), ${counts.inProgress} in progress (409), ${counts.unavailable} unavailable (503), ` +
      `${counts.handlerFailures} handler failures (500; ${ledger.thrown} thrown, ${ledger.answered500} answered) ` +
      `of ${ledger.handlerCalls} handler calls, ${counts.late} not answered in time; ` +
      `at most ${counts.maxAttempts} attempts for one copy`,
  );
}

/**
 * Waits, while the sender runs, until `reached()` holds: the moment to break
 * something mid-run. Fails if the sender finished first, with its own error
 * if it failed.
 */
export async function midRun(sending: Promise<unknown>, reached: () => boolean): Promise<void> {
  let finished = false;
  sending.then(
    () => (finished = true),
    () => (finished = true),
  );
  while (!reached()) {
    if (finished) {
      await sending;
      throw new Error('the sender finished before the moment to break something');
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/**
 * Registers an `afterAll` that runs, last first, every close handed to the
 * returned function. A server closes once its running routes end, which for
 * a slow route takes a few leases.
 */
export function closeAfterAll(): (close: () => unknown) => void {
  const closes: Array<() => unknown> = [];
  afterAll(async () => {
    // Every close runs, also after one failed: a server left running would outlive the test.
    const failures: unknown[] = [];
    for (const close of closes.reverse()) {
      try {
        await close();
      } catch (error) {
        failures.push(error);
      }
    }
    if (failures.length > 0) throw failures[0];
  }, 30_000);
  return (close) => {
    closes.push(close);
  };
}
