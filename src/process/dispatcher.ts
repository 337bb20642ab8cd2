/**
 * Running the handler of a verified event's type and telling what came of
 * it: handled, taken without a handler, or failed (a handler that threw,
 * an event that failed its schema, an unknown type refused). The same for a
 * receiver's `on`, a queue worker and `dispatch`; what to answer over HTTP
 * is the receiver's business.
 */
import type { WebhookDelivery } from '../core/delivery.js';
import { WebhookHandlerError, type WebhookError } from '../core/errors.js';
import { isKnownEventType } from '../core/event.js';
import { callSafely, whenSettled } from '../base/user-code.js';
import { checkHandlerOptions, type CheckedHandlers, type HandlerRoute } from './handler-options.js';
import type { EventSchemas, HandlerErrorCallback, HandlerOptions } from './handler-types.js';
import type { StandardSchema, StandardSchemaIssue } from './standard-schema.js';

/** What came of running the user's code for an event. */
export type HandlerOutcome =
  /** A handler ran and resolved. */
  | { readonly kind: 'handled' }
  /** No handler runs for its type, and it is taken: a known type without a handler, or an unknown type under `unknownEvents: 'accept'`. */
  | { readonly kind: 'unhandled' }
  /** It was not taken; the sender (or the queue) retries it. `paths` only for `invalid_event_data`. */
  | { readonly kind: 'failed'; readonly error: WebhookHandlerError; readonly paths?: readonly string[] };

/** The outcomes without detail, shared: most deliveries end in one of them. */
export const HANDLED: HandlerOutcome = Object.freeze({ kind: 'handled' });
export const UNHANDLED: HandlerOutcome = Object.freeze({ kind: 'unhandled' });

export interface Dispatcher {
  /** Runs the handler of the delivery's event type; a handler that returns no thenable is answered at once, without a promise. Never throws nor rejects. */
  dispatch(delivery: WebhookDelivery): HandlerOutcome | Promise<HandlerOutcome>;
  /** Whether a handler runs for events of `type` (its own in `on`, or `onUnknownEvent` for an unknown type). */
  handles(type: string): boolean;
}

const UNKNOWN_TYPE_MESSAGE = 'this receiver refuses event types it does not know';
// Fixed: what the handler threw may quote the event, a query or a secret.
const HANDLER_FAILED_MESSAGE = 'the handler for this event failed; retry later';

/**
 * Checks the handler options once and returns the dispatcher; `byDefault`
 * is the `onHandlerError` when none is given. Throws `WebhookOptionsError` for a
 * caller mistake.
 */
export function createDispatcher<S extends EventSchemas>(options: HandlerOptions<S>, byDefault?: HandlerErrorCallback): Dispatcher {
  const checked = checkHandlerOptions(options as unknown as HandlerOptions<{}>, byDefault);
  return {
    dispatch: (delivery) => dispatchChecked(checked, delivery),
    handles: (type) => checked.routes.has(type) || (!isKnownEventType(type) && checked.unknown !== undefined),
  };
}

function dispatchChecked(options: CheckedHandlers, delivery: WebhookDelivery): HandlerOutcome | Promise<HandlerOutcome> {
  const { type } = delivery.event;
  const route = options.routes.get(type) ?? (isKnownEventType(type) ? undefined : options.unknown);
  if (route !== undefined) return route.schema === undefined ? call(route.handler, delivery.event, delivery, options.onHandlerError) : validated(route, delivery, options.onHandlerError);
  // Known types without a handler, like unknown ones, are taken: anything else is retried for days.
  if (isKnownEventType(type) || options.unknownEvents === 'accept') return UNHANDLED;
  return { kind: 'failed', error: new WebhookHandlerError('unknown_event_type', UNKNOWN_TYPE_MESSAGE) };
}

/** Runs the handler of a route with a schema on what the schema made of the event, once it passed. */
async function validated(route: HandlerRoute, delivery: WebhookDelivery, onHandlerError: HandlerErrorCallback): Promise<HandlerOutcome> {
  const { event } = delivery;
  let outcome: ValidationOutcome;
  try {
    outcome = await validateEvent(route.schema!, event);
  } catch (error) {
    return { kind: 'failed', error: handlerFailed(onHandlerError, error, delivery) };
  }
  if (!outcome.valid) {
    const { paths } = outcome;
    const where = paths.length > 0 ? ` at ${paths.join(', ')}` : '';
    const error = new WebhookHandlerError('invalid_event_data', `the event failed the schema for its type${where}`);
    callSafely(onHandlerError, error, event, delivery);
    return { kind: 'failed', error, paths };
  }
  return call(route.handler, outcome.value, delivery, onHandlerError);
}

/** Calls a handler; one that returns no thenable is answered at once, and Promise.resolve adopts a thenable as `await` does. */
function call(handler: HandlerRoute['handler'], input: unknown, delivery: WebhookDelivery, onHandlerError: HandlerErrorCallback): HandlerOutcome | Promise<HandlerOutcome> {
  const failed = (error: unknown): HandlerOutcome => ({ kind: 'failed', error: handlerFailed(onHandlerError, error, delivery) });
  let returned: unknown;
  try {
    returned = handler(input, delivery);
  } catch (error) {
    return failed(error);
  }
  return whenSettled(returned, handled, failed);
}

const handled = (): HandlerOutcome => HANDLED;

/**
 * Tells `onHandlerError` what the user's code threw (its own throw or
 * rejection dropped) and answers the error the sender gets instead:
 * `handler_failed`, with a fixed message, its `cause` what was thrown.
 */
export function handlerFailed(onHandlerError: HandlerErrorCallback, error: unknown, delivery: WebhookDelivery): WebhookHandlerError {
  callSafely(onHandlerError, error, delivery.event, delivery);
  return new WebhookHandlerError('handler_failed', HANDLER_FAILED_MESSAGE, { cause: error });
}

/** What the user's code threw behind `refusal`, when it is a `handler_failed`; `undefined` for any other. */
export function thrownBehind(refusal: WebhookError | undefined): unknown {
  return refusal instanceof WebhookHandlerError && refusal.code === 'handler_failed' ? refusal.cause : undefined;
}

/**
 * What a failed job is failed with, where the operator alone reads it (a queue's failed job, its span): what
 * the handler threw, when it threw an `Error`, so that its message and stack are the job's; else the
 * refusal a receiver would have answered.
 */
export function jobFailure(refusal: WebhookHandlerError): Error {
  const thrown = thrownBehind(refusal);
  return thrown instanceof Error ? thrown : refusal;
}

/** The most paths one answer names: enough to fix a schema, bounded whatever the event holds. */
export const MAX_REPORTED_PATHS = 20;

/** What validating an event led to: the schema's output, or the paths where it failed. */
export type ValidationOutcome = { readonly valid: true; readonly value: unknown } | { readonly valid: false; readonly paths: readonly string[] };

/** Validates `event` with `schema`. A schema that throws, rejects or answers nonsense rejects. */
export async function validateEvent(schema: StandardSchema, event: unknown): Promise<ValidationOutcome> {
  const result = await schema['~standard'].validate(event);
  if (result.issues === undefined) return { valid: true, value: result.value };
  // The libraries' messages may quote the value (valibot: 'Invalid type: Expected string but received 42'): keep paths only.
  const paths = [...new Set(result.issues.map(issuePath))];
  return { valid: false, paths: paths.slice(0, MAX_REPORTED_PATHS) };
}

/** A path in JSONPath notation from the event's root: `$.data.object.items[0]`, `$["odd key"]`. */
function issuePath(issue: StandardSchemaIssue): string {
  let path = '$';
  for (const segment of issue.path ?? []) {
    const key = typeof segment === 'object' && segment !== null ? segment.key : segment;
    if (typeof key === 'string' && /^[A-Za-z_$][\w$]*$/.test(key)) path += `.${key}`;
    else path += `[${typeof key === 'string' ? JSON.stringify(key) : String(key)}]`;
  }
  return path;
}
