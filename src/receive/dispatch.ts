/**
 * Runs the handler of an event's type and decides the answer: 204 once it
 * resolves, 500 `handler_failed` when it throws, 422 when the event fails its
 * schema, 204 for a type with no handler. The adapters answer with what the
 * dispatcher returns; `dispatch` does the same for `verify()` users.
 */
import { WebhookVerificationError } from '../core/errors.js';
import { isKnownEventType, type WebhookEvent } from '../core/event.js';
import { callSafely } from './call-safely.js';
import { accepted, refused, type DispatchResult } from './dispatch-result.js';
import type { DispatchOptions, EventHandlers, EventSchemas, HandlerContext, HandlerOptions } from './event-handlers.js';
import { validateEvent } from './event-validation.js';
import { handlerFailed } from './handler-failure.js';
import { checkHandlerOptions, type CheckedHandlerOptions, type HandlerRoute } from './handler-options.js';

export type { DispatchResult, WebhookErrorBody } from './dispatch-result.js';

export interface Dispatcher {
  /** Runs the event's handler and returns the answer. Never rejects. */
  dispatch(event: WebhookEvent): Promise<DispatchResult>;
}

const UNKNOWN_TYPE_MESSAGE = 'this receiver refuses event types it does not know';

/**
 * Checks the handler options once and returns the dispatcher, or `undefined`
 * without `on` (the route, or the `singleHandler` an entry was given, answers
 * then). Throws `TypeError` for a caller mistake. Adapters call it when they
 * are created.
 */
export function createDispatcher<S extends EventSchemas>(options: HandlerOptions<S>, singleHandler = false): Dispatcher | undefined {
  const checked = checkHandlerOptions(options, singleHandler);
  if (checked === undefined) return undefined;
  return { dispatch: (event) => dispatchChecked(checked, event) };
}

/**
 * Runs the handler in `on` for the event's type and returns the answer to
 * send (status, headers and body); never rejects. For events from `verify()`:
 * there is no dedup claim here, so a retry runs its handler again. Checks
 * `on` and `options` on each call and throws `TypeError` for a mistake.
 */
export function dispatch<S extends EventSchemas = {}>(
  event: WebhookEvent,
  on: EventHandlers<S>,
  options: DispatchOptions<S> = {},
): Promise<DispatchResult> {
  if (on === undefined) throw new TypeError('svc-webhooks: dispatch needs on, an object of handlers by event type');
  if (typeof options !== 'object' || options === null) throw new TypeError('svc-webhooks: dispatch options must be an object');
  const checked = checkHandlerOptions<S>({ ...options, on }, false) as CheckedHandlerOptions;
  return dispatchChecked(checked, event);
}

async function dispatchChecked(options: CheckedHandlerOptions, event: WebhookEvent): Promise<DispatchResult> {
  const context: HandlerContext = { id: event.id };
  const route = options.routes.get(event.type);
  if (route !== undefined) return run(route, event, context, options);
  // Known types without a handler, like unknown ones, are answered 2xx: anything else is retried for days.
  if (isKnownEventType(event.type) || options.onUnknown === 'accept') return accepted();
  if (options.onUnknown === 'reject') return refused(new WebhookVerificationError('unknown_event_type', UNKNOWN_TYPE_MESSAGE));
  return run({ handler: options.onUnknown as HandlerRoute['handler'] }, event, context, options);
}

async function run(route: HandlerRoute, event: WebhookEvent, context: HandlerContext, options: CheckedHandlerOptions): Promise<DispatchResult> {
  try {
    let input: unknown = event;
    if (route.schema !== undefined) {
      const outcome = await validateEvent(route.schema, event);
      if (!outcome.valid) {
        const { paths } = outcome;
        const where = paths.length > 0 ? ` at ${paths.join(', ')}` : '';
        const error = new WebhookVerificationError('invalid_event_data', `the event failed the schema for its type${where}`);
        callSafely(options.onHandlerError, error, event, context);
        return refused(error, paths);
      }
      input = outcome.value;
    }
    await route.handler(input, context);
  } catch (error) {
    return refused(handlerFailed(options.onHandlerError, error, event, context));
  }
  return accepted();
}
