/**
 * What a failing handler leads to, on every adapter and `dispatch`: its error
 * goes to `onHandlerError`, never to the sender, who gets one fixed 500.
 */
import { WebhookVerificationError } from '../core/errors.js';
import type { WebhookEvent } from '../core/event.js';
import { checkCallback } from '../core/option-checks.js';
import { callSafely } from './call-safely.js';
import type { HandlerContext, HandlerErrorCallback } from './event-handlers.js';

// Fixed: what the handler threw may quote the event, a query or a secret.
const HANDLER_FAILED_MESSAGE = 'the handler for this event failed; retry later';

/** `onHandlerError`, checked, or the default that logs one line. Throws `TypeError`. */
export function checkOnHandlerError(onHandlerError: unknown = logHandlerError): HandlerErrorCallback {
  checkCallback('onHandlerError', onHandlerError);
  return onHandlerError as HandlerErrorCallback;
}

/**
 * Tells `onHandlerError` what the handler threw (its own throw or rejection
 * dropped) and answers the error the sender gets: 500 `handler_failed`.
 */
export function handlerFailed(
  onHandlerError: HandlerErrorCallback,
  error: unknown,
  event: WebhookEvent,
  context: HandlerContext,
): WebhookVerificationError {
  callSafely(onHandlerError, error, event, context);
  return new WebhookVerificationError('handler_failed', HANDLER_FAILED_MESSAGE);
}

/** One line, without the error's message: a handler's message may quote the event. */
function logHandlerError(error: unknown, event: WebhookEvent): void {
  const what =
    error instanceof WebhookVerificationError && error.code === 'invalid_event_data'
      ? error.message
      : `the handler failed (${error instanceof Error ? error.name : typeof error})`;
  console.error(`svc-webhooks: event ${JSON.stringify(event.id)} of type ${JSON.stringify(event.type)}: ${what}; the sender will retry it`);
}
