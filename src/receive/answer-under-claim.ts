/**
 * Running the user's code for a delivery under its dedup claim, and settling
 * the claim by the answer, without holding the answer for a failing store.
 * Every way to handle an event (the handlers of `on`, the single handler of
 * the Fetch and Lambda entries) goes through here.
 */
import type { VerifiedDelivery } from '../core/verify-delivery.js';
import { beforeDeadline } from './deadline.js';
import type { ProcessReception } from './receiver.js';

/**
 * How long an answer waits for the store to record its outcome. A store
 * answers in milliseconds, and waiting for it means a retry finds the claim
 * settled and a runtime that stops work once the answer is sent (a Worker, a
 * frozen Lambda) does not cut the settle off. A store that keeps failing (or
 * retries) must not hold the answer past the sender's 10 s: the settle goes
 * on after the answer then.
 */
export const SETTLE_WAIT_MS = 1000;

/** Takes work that must go on after the answer, where the platform keeps it alive (a Worker's `ctx.waitUntil`). */
export type WaitUntil = (work: Promise<void>) => void;

/**
 * Runs `run` (which never rejects) for the delivery, then settles the claim
 * by `statusOf` its answer: done on a 2xx, released otherwise so the retry
 * runs the code again. Returns the answer once the store recorded it, or
 * after `SETTLE_WAIT_MS`, whichever comes first; `waitUntil`, when the
 * platform gives one, takes the settling so that it is not cut off.
 */
export async function answerUnderClaim<A>(
  reception: ProcessReception,
  run: (delivery: VerifiedDelivery) => Promise<A>,
  statusOf: (answer: A) => number,
  waitUntil?: WaitUntil,
): Promise<A> {
  const answer = await run(reception.delivery);
  if (reception.settle) {
    // settle never rejects: it reports store failures to onStoreError itself, and the answer stands.
    const settling = reception.settle(statusOf(answer));
    waitUntil?.(settling);
    await beforeDeadline(settling, SETTLE_WAIT_MS, () => undefined);
  }
  return answer;
}
