/**
 * Runs the handler of an event's type and decides the answer: 204 once it
 * resolves, 500 `handler_failed` when it throws, 422 when the event fails its
 * schema, 204 for a type with no handler. The adapters answer with what
 * `Dispatcher` returns; `dispatch` does the same for `verify()` users.
 */
import { WebhookVerificationError, type WebhookErrorCode } from '../core/errors.js';
import { isKnownEventType, type WebhookEvent } from '../core/event.js';
import { callSafely } from './call-safely.js';
import { beforeDeadline } from './deadline.js';
import type { DispatchOptions, EventHandlers, EventSchemas, HandlerContext, HandlerOptions } from './event-handlers.js';
import { validateEvent } from './event-validation.js';
import { checkHandlerOptions, type CheckedHandlerOptions, type HandlerRoute } from './handler-options.js';
import type { Reception, WebhookResponse } from './receiver.js';

/** The body of a refusal: the shape every refusal of svc-webhooks has, plus `paths` for a schema failure. */
export interface WebhookErrorBody {
  readonly error: {
    readonly code: WebhookErrorCode;
    readonly message: string;
    /** `invalid_event_data` only: where the event failed its schema, as `$.data.object.id`; never the values. */
    readonly paths?: readonly string[];
  };
}

/** The answer to send: `body` is absent exactly when `status` is 204. */
export interface DispatchResult extends WebhookResponse {
  readonly body: WebhookErrorBody | undefined;
  /** The refusal `body` describes, for an adapter's `onError`; absent on 204. */
  readonly error?: WebhookVerificationError;
}

/** A delivery the receiver let through, with its dedup claim if any. */
export type ProcessReception = Extract<Reception, { readonly action: 'process' }>;

export interface Dispatcher {
  /** Runs the event's handler and returns the answer. Never rejects. */
  dispatch(event: WebhookEvent): Promise<DispatchResult>;
  /**
   * Dispatches a received delivery under its dedup claim, then settles the
   * claim by the answer's status (done on 204, released otherwise, so the
   * retry runs the handler again) before returning the answer, waiting for
   * the store at most `SETTLE_WAIT_MS`.
   */
  answer(reception: ProcessReception): Promise<DispatchResult>;
}

/**
 * How long an answer waits for the store to record its outcome. A store
 * answers in milliseconds, and waiting for it means a retry finds the claim
 * settled and a runtime that stops work once the answer is sent (a Worker)
 * does not cut the settle off. A store that keeps failing (or retries) must
 * not hold the answer past the sender's 10 s: the settle goes on unawaited.
 */
export const SETTLE_WAIT_MS = 1000;

const HANDLER_FAILED_MESSAGE = 'the handler for this event failed; retry later';
const UNKNOWN_TYPE_MESSAGE = 'this receiver refuses event types it does not know';

/**
 * Checks the handler options once and returns the dispatcher, or `undefined`
 * without `on` (the route answers then). Throws `TypeError` for a caller
 * mistake. Adapters call it when they are created.
 */
export function createDispatcher<S extends EventSchemas>(options: HandlerOptions<S>): Dispatcher | undefined {
  const checked = checkHandlerOptions(options);
  if (checked === undefined) return undefined;
  const dispatchEvent = (event: WebhookEvent): Promise<DispatchResult> => dispatchChecked(checked, event);
  return {
    dispatch: dispatchEvent,
    async answer(reception) {
      const result = await dispatchEvent(reception.delivery.event);
      // settle reports store failures to onStoreError itself: the handler's answer stands.
      if (reception.settle) await beforeDeadline(reception.settle(result.status), SETTLE_WAIT_MS, () => undefined);
      return result;
    },
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
  const checked = checkHandlerOptions<S>({ ...options, on }) as CheckedHandlerOptions;
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
    callSafely(options.onHandlerError, error, event, context);
    // A fixed message: what the handler threw may quote the event or a secret.
    return refused(new WebhookVerificationError('handler_failed', HANDLER_FAILED_MESSAGE));
  }
  return accepted();
}

function accepted(): DispatchResult {
  return { status: 204, headers: {}, body: undefined };
}

function refused(error: WebhookVerificationError, paths?: readonly string[]): DispatchResult {
  const { code, message, status } = error;
  const body: WebhookErrorBody = { error: paths === undefined ? { code, message } : { code, message, paths } };
  return { status, headers: {}, body, error };
}
