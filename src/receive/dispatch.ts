/**
 * Running the user's code for a verified event and deciding the answer: the
 * handler of its type in `on` (204 once it resolves, 422 when the event
 * fails its schema, 204 or 422 for a type nobody handles), or an entry's
 * single handler (its own answer, or 204 for nothing). A handler that throws
 * gets 500 `handler_failed`: its error goes to `onHandlerError`, never to the
 * sender. `dispatch` does the same for `verify()` users.
 */
import { WebhookVerificationError } from '../core/errors.js';
import { isKnownEventType, type WebhookEvent } from '../core/event.js';
import type { DispatchOptions, EventHandlers, EventSchemas, HandlerContext, HandlerErrorCallback, HandlerOptions } from './handler-types.js';
import { checkHandlerOptions, type CheckedHandlerOptions, type HandlerRoute } from './handler-options.js';
import { accepted, refused, type DispatchResult } from './responses.js';
import type { StandardSchema, StandardSchemaIssue } from './standard-schema.js';
import { callSafely, isThenable } from './user-callbacks.js';

export interface Dispatcher {
  /** Runs the event's handler and returns the answer. Never rejects. */
  dispatch(event: WebhookEvent, context: HandlerContext): Promise<DispatchResult>;
  /** Whether a handler runs for events of `type` (its own in `on`, or an `onUnknown` function for an unknown type). */
  handles(type: string): boolean;
}

const UNKNOWN_TYPE_MESSAGE = 'this receiver refuses event types it does not know';
// Fixed: what the handler threw may quote the event, a query or a secret.
const HANDLER_FAILED_MESSAGE = 'the handler for this event failed; retry later';

/**
 * Checks the handler options once and returns the dispatcher, or `undefined`
 * without `on` (the route, or the `singleHandler` an entry was given, answers
 * then). Throws `TypeError` for a caller mistake.
 */
export function createDispatcher<S extends EventSchemas>(options: HandlerOptions<S>, singleHandler = false): Dispatcher | undefined {
  const checked = checkHandlerOptions(options, singleHandler);
  if (checked === undefined) return undefined;
  return {
    dispatch: (event, context) => dispatchChecked(checked, event, context),
    handles: (type) => checked.routes.has(type) || (!isKnownEventType(type) && typeof checked.onUnknown === 'function'),
  };
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
  return dispatchChecked(checked, event, { id: event.id });
}

async function dispatchChecked(options: CheckedHandlerOptions, event: WebhookEvent, context: HandlerContext): Promise<DispatchResult> {
  const route = options.routes.get(event.type);
  if (route !== undefined) return run(route, event, context, options.onHandlerError);
  // Known types without a handler, like unknown ones, are answered 2xx: anything else is retried for days.
  if (isKnownEventType(event.type) || options.onUnknown === 'accept') return accepted();
  if (options.onUnknown === 'reject') return refused(new WebhookVerificationError('unknown_event_type', UNKNOWN_TYPE_MESSAGE));
  return run({ handler: options.onUnknown as HandlerRoute['handler'] }, event, context, options.onHandlerError);
}

async function run(route: HandlerRoute, event: WebhookEvent, context: HandlerContext, onHandlerError: HandlerErrorCallback): Promise<DispatchResult> {
  try {
    let input: unknown = event;
    if (route.schema !== undefined) {
      const outcome = await validateEvent(route.schema, event);
      if (!outcome.valid) {
        const { paths } = outcome;
        const where = paths.length > 0 ? ` at ${paths.join(', ')}` : '';
        const error = new WebhookVerificationError('invalid_event_data', `the event failed the schema for its type${where}`);
        callSafely(onHandlerError, error, event, context);
        return refused(error, {}, paths);
      }
      input = outcome.value;
    }
    await route.handler(input, context);
  } catch (error) {
    return refused(handlerFailed(onHandlerError, error, event, context));
  }
  return accepted();
}

/** How an entry's own answers look: a Response, a Lambda result. */
export interface AnswerShape<A> {
  /** Whether a value the user's handler or `onError` returned is an answer. */
  readonly isAnswer: (value: unknown) => value is A;
  /** What an answer is, for the error that names a value that is none. */
  readonly described: string;
  /** The HTTP status of an answer, which settles the dedup claim. */
  readonly statusOf: (answer: A) => number;
}

/** The single handler's own answer, with its status. */
export interface HandlerAnswer<A> {
  readonly answer: A;
  readonly status: number;
}

/**
 * Runs an entry's single handler (`call`) for `event`: its answer, or 204
 * when it returns nothing. A throw, a rejection or a value that is no answer
 * becomes 500 `handler_failed`. Never rejects.
 */
export async function runSingleHandler<A>(
  call: () => unknown,
  shape: AnswerShape<A>,
  onHandlerError: HandlerErrorCallback,
  event: WebhookEvent,
  context: HandlerContext,
): Promise<HandlerAnswer<A> | DispatchResult> {
  try {
    const returned = call();
    const value = isThenable(returned) ? await returned : returned;
    if (value === undefined) return accepted();
    if (!shape.isAnswer(value)) throw new TypeError(`svc-webhooks: the webhook handler must return ${shape.described} or nothing`);
    return { answer: value, status: shape.statusOf(value) };
  } catch (error) {
    return refused(handlerFailed(onHandlerError, error, event, context));
  }
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

/** The most paths one answer names: enough to fix a schema, bounded whatever the event holds. */
export const MAX_REPORTED_PATHS = 20;

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
