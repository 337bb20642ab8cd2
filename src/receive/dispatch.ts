/** `dispatch`: the handlers of `on` for a delivery verified by `verifyDelivery()`, and the answer to send. */
import type { WebhookDelivery } from '../core/delivery.js';
import { createDispatcher } from '../process/dispatcher.js';
import type { EventSchemas, HandlerOptions } from '../process/handler-types.js';
import { handlersAnswer, type DispatchResult } from './responses.js';
import { WebhookOptionsError } from '../base/options-error.js';

/**
 * Runs the handler in `options.on` for the delivery's event type and
 * resolves to the answer to send (status, headers and body): 204, or a
 * refusal (500 `handler_failed`, 422 `invalid_event_data` with `paths`,
 * 422 `unknown_event_type`). Never rejects. For deliveries from
 * `verifyDelivery()`: there is no dedup claim here, so a retry runs its
 * handler again. Checks the options on each call and throws `WebhookOptionsError`
 * for a mistake.
 */
export function dispatch<S extends EventSchemas = {}>(delivery: WebhookDelivery, options: HandlerOptions<S>): Promise<DispatchResult> {
  if (typeof options !== 'object' || options === null) throw new WebhookOptionsError('svc-webhooks: dispatch needs options with on, an object of handlers by event type');
  return Promise.resolve(createDispatcher(options).dispatch(delivery)).then(handlersAnswer);
}
