/**
 * Handing a verified delivery to durable work elsewhere (a queue) in place
 * of running a handler: under the delivery's claim, so that a retry
 * meanwhile waits. Work that takes longer than the sender's 10 s then never
 * holds an answer.
 */
import { CONSOLE_LINES, errorFields, quoted, writeLog, type WebhookLogger } from '../base/logger.js';
import { callSafely, kindOf } from '../base/user-code.js';
import type { WebhookDelivery } from '../core/delivery.js';
import { WebhookHandlerError } from '../core/errors.js';
import { deliveryLogFields } from './handler-options.js';
import type { HandlerErrorCallback } from './handler-types.js';
import { WebhookOptionsError } from '../base/options-error.js';

/** Where deliveries go instead of a handler: a durable queue, behind one method. `enqueue()` of `svc-webhooks/bullmq` or `svc-webhooks/pg-boss` makes one. */
export interface Handoff {
  /**
   * Records `delivery` durably (adds the job), resolving once it is;
   * rejects when it could not. Resolving to `'duplicate'` says the event was
   * handed off before: the sender gets the duplicate's 200.
   */
  hand(delivery: WebhookDelivery): Promise<void | 'duplicate'>;
}

/** What handing a delivery off led to. */
export type HandoffOutcome =
  | { readonly kind: 'queued' }
  | { readonly kind: 'duplicate' }
  | { readonly kind: 'failed'; readonly error: WebhookHandlerError };

const QUEUED: HandoffOutcome = Object.freeze({ kind: 'queued' });
const DUPLICATE: HandoffOutcome = Object.freeze({ kind: 'duplicate' });

/** Checks a `handoff` option once; throws `WebhookOptionsError`. */
export function checkHandoff(handoff: unknown): Handoff {
  if (typeof handoff !== 'object' || handoff === null || typeof (handoff as Partial<Handoff>).hand !== 'function') {
    throw new WebhookOptionsError('svc-webhooks: handoff must be what enqueue() returns: an object with a hand(delivery) method');
  }
  return handoff as Handoff;
}

/**
 * Hands the delivery off: queued once recorded, a duplicate for one handed
 * off before, failed (`handoff_failed`, its `cause` the queue's error, which
 * also goes to `onHandlerError`) when the queue did not record it. Never rejects.
 */
export async function handOff(handoff: Handoff, delivery: WebhookDelivery, onHandlerError: HandlerErrorCallback): Promise<HandoffOutcome> {
  try {
    return (await handoff.hand(delivery)) === 'duplicate' ? DUPLICATE : QUEUED;
  } catch (error) {
    callSafely(onHandlerError, error, delivery.event, delivery);
    return { kind: 'failed', error: new WebhookHandlerError('handoff_failed', 'the event could not be queued; retry later', { cause: error }) };
  }
}

/** The default `onHandlerError` with a handoff: one warning to `logger` naming the event, without the queue error's message, which may quote it. */
export function handoffErrorLog(logger: WebhookLogger = CONSOLE_LINES): HandlerErrorCallback {
  return (error, event, delivery) => {
    const fields = deliveryLogFields('handoff_failed', delivery, errorFields(error, false));
    const message = `event ${quoted(event.id)} of type ${quoted(event.type)}: the queue did not record it (${kindOf(error)}); the sender will retry it`;
    writeLog(logger, 'warn', fields, message);
  };
}
