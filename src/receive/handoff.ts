/**
 * Handing a verified event to durable work elsewhere (a queue) in place of
 * running a handler: under the delivery's claim, so that a retry meanwhile
 * waits, and answered 202 once the work is recorded. Work that takes longer
 * than the sender's 10 s then never holds an answer.
 */
import { WebhookVerificationError } from '../core/errors.js';
import type { WebhookEvent } from '../core/event.js';
import type { HandlerContext, HandlerErrorCallback } from './handler-types.js';
import { duplicate, refused, type DecidedResponse, type DispatchResult } from './responses.js';
import { callSafely } from './user-callbacks.js';

/** Where events go instead of a handler: a durable queue, behind one method. */
export interface Handoff {
  /**
   * Records `event` durably (adds the job), resolving once it is; rejects
   * when it could not. Resolving to `'duplicate'` says the event was handed
   * off before: the sender gets the duplicate's 200.
   */
  hand(event: WebhookEvent, context: HandlerContext): Promise<void | 'duplicate'>;
}

/** `Retry-After`, in seconds, when the queue failed: soon, like a failing store. */
export const HANDOFF_RETRY_AFTER_SECONDS = 5;

/** Checks a `handoff` option once; throws `TypeError`. */
export function checkHandoff(handoff: unknown): Handoff | undefined {
  if (handoff === undefined) return undefined;
  if (typeof handoff !== 'object' || handoff === null || typeof (handoff as Partial<Handoff>).hand !== 'function') {
    throw new TypeError('svc-webhooks: handoff must be what enqueue() returns: an object with a hand(event, context) method');
  }
  return handoff as Handoff;
}

/**
 * Hands the event off: 202 once recorded, the duplicate's 200 for one
 * handed off before, 503 `handoff_failed` with `Retry-After` when the queue
 * failed (its error goes to `onHandlerError`, and the claim is released by
 * that status). Never rejects.
 */
export async function handOff(handoff: Handoff, event: WebhookEvent, context: HandlerContext, onHandlerError: HandlerErrorCallback): Promise<DispatchResult | DecidedResponse> {
  try {
    if ((await handoff.hand(event, context)) === 'duplicate') return duplicate();
    return { status: 202, headers: {}, body: undefined };
  } catch (error) {
    callSafely(onHandlerError, error, event, context);
    const failed = new WebhookVerificationError('handoff_failed', 'the event could not be queued; retry later', { cause: error });
    return refused(failed, { 'retry-after': String(HANDOFF_RETRY_AFTER_SECONDS) });
  }
}
