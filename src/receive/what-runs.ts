/**
 * What runs for each verified delivery, said once: exactly one of the
 * handlers of `on`, a `handoff` to a queue, the route after a middleware,
 * or the handler an entry was given. The types make a wrong combination
 * fail to compile on every entry; `whatRuns` refuses it at creation, with
 * one message, for callers the types do not reach.
 */
import { CONSOLE_LINES, type WebhookLogger } from '../base/logger.js';
import { isThenable, whenSettled } from '../base/user-code.js';
import type { WebhookDelivery } from '../core/delivery.js';
import { createDispatcher, handlerFailed, type HandlerOutcome } from '../process/dispatcher.js';
import { checkOnHandlerError, ONLY_WITH_ON, receiverErrorLog } from '../process/handler-options.js';
import type { EventSchemas, HandlerErrorCallback, HandlerOptions } from '../process/handler-types.js';
import { checkHandoff, handOff, handoffErrorLog, type Handoff } from '../process/handoff.js';
import type { DeliveryOutcome } from '../process/diagnostics.js';
import type { AnswerShape } from './platform.js';
import { accepted, handlersAnswer, handoffAnswer, refused, type DecidedResponse } from './responses.js';
import { WebhookOptionsError } from '../base/options-error.js';

/** The options of `on`, left out: what every mode but the handlers of `on` says of them. */
export interface WithoutHandlers {
  /** Not in this mode: the handlers of `on` are a mode of their own. */
  readonly on?: undefined;
  /** Not in this mode: schemas check the events of `on`'s handlers. */
  readonly schemas?: undefined;
  /** Not in this mode: unknown types are the business of `on`'s handlers. */
  readonly unknownEvents?: undefined;
  /** Not in this mode: unknown types are the business of `on`'s handlers. */
  readonly onUnknownEvent?: undefined;
}

/**
 * The handlers of `on` answer each delivery: the handler of its event's type runs, under the claim, with
 * the event and `D`: the delivery, with the host's request and context on the Fetch, Lambda, Azure and h3 entries.
 */
export interface HandlersMode<S extends EventSchemas = {}, D extends WebhookDelivery = WebhookDelivery> extends HandlerOptions<S, D> {
  /** Not with `on`: a handoff is a mode of its own. */
  readonly handoff?: undefined;
}

/** A queue takes each delivery: answered 202 once it recorded it, and a worker runs the handlers on the other side. */
export interface HandoffMode extends WithoutHandlers {
  /**
   * Where each verified delivery goes, under its claim, in place of
   * handlers: `enqueue()` of `svc-webhooks/bullmq` or `svc-webhooks/pg-boss`.
   * Answered 202 once the queue recorded it, 200 for one it had, 503
   * `handoff_failed` with `Retry-After` when it did not.
   */
  readonly handoff: Handoff;
  /**
   * Told when the queue did not record a delivery, with the queue's error.
   * @default logs one warning to `logger` (by default, console.error): the event's type and id, and the error's class
   */
  readonly onHandlerError?: HandlerErrorCallback;
}

/** Middleware (Express, Hono, Fastify's `routes`): the route after it answers each delivery. */
export interface RouteMode extends WithoutHandlers {
  /** Not with a route: a handoff is a mode of its own. */
  readonly handoff?: undefined;
  /** Not with a route: the route handles its own errors. */
  readonly onHandlerError?: undefined;
}

/** The Fetch and Lambda entries given a handler: that handler answers each delivery. */
export interface SingleHandlerMode extends WithoutHandlers {
  /** Not with a handler: a handoff is a mode of its own. */
  readonly handoff?: undefined;
  /**
   * Told when the handler threw or rejected, or returned something that is
   * no answer (the request is answered 500 `handler_failed`).
   * @default logs one warning to `logger` (by default, console.error): the event's type and id, and what the handler threw (its class, message and stack)
   */
  readonly onHandlerError?: HandlerErrorCallback;
}

/** What a middleware's options say runs: the handlers of `on`, a `handoff`, or, without either, the route. */
export type MiddlewareMode<S extends EventSchemas = {}> = HandlersMode<S> | HandoffMode | RouteMode;

/** The route of a middleware: hands it the delivery and resolves to the status it answered with, once it did. */
export type Route<R> = (request: R, delivery: WebhookDelivery) => PromiseLike<number>;

/** The handler an entry (Fetch, Lambda, Azure, h3) was given, what its answers look like, and what it gets besides the event. */
export interface SingleHandler<R, A> {
  readonly handler: unknown;
  readonly shape: AnswerShape<A>;
  context(request: R, delivery: WebhookDelivery): unknown;
}

/** What an entry brings besides its options: the route of a middleware, or the handler it was given. */
export type EntryRunner<R, A> = { readonly route: Route<R> } | SingleHandler<R, A>;

/** What running the user's code led to: an answer decided here (with its outcome), the single handler's own, or the route's, already sent. */
export type Outcome<A> =
  | { readonly kind: 'decided'; readonly response: DecidedResponse; readonly outcome: DeliveryOutcome }
  | { readonly kind: 'answered'; readonly answer: A; readonly status: number }
  | { readonly kind: 'routed'; readonly status: number };

/** What runs, chosen once: it runs the user's code for a delivery, and tells whether any runs for a type. */
export interface WhatRuns<R, A> {
  /** Runs the user's code for `delivery`; a handler that answers at once is answered without a promise. Never rejects but with what the route rejects with. */
  run(request: R, delivery: WebhookDelivery): Outcome<A> | Promise<Outcome<A>>;
  /** Whether user code runs for events of `type`: false for a type nobody handles. */
  runsFor(type: string): boolean;
}

/** The options that choose what runs. */
type ModeOptions = Partial<HandlerOptions<EventSchemas>> & { readonly handoff?: unknown };

const always = (): boolean => true;

/**
 * Chooses what runs from the options and what the entry brings (a route,
 * a handler, or nothing). Throws `WebhookOptionsError`, with one message whatever the
 * entry, unless exactly one of `on`, `handoff` and the entry's own (a
 * handler; a route, which runs when neither of the others is given) says
 * what runs, and for the options of `on` or `onHandlerError` where they
 * take no effect. The defaults of `onHandlerError` write to `logger`.
 */
export function whatRuns<R, A>(options: ModeOptions, runner: EntryRunner<R, A> | undefined, logger: WebhookLogger = CONSOLE_LINES): WhatRuns<R, A> {
  const route = runner !== undefined && 'route' in runner ? runner.route : undefined;
  const single = runner !== undefined && 'shape' in runner && runner.handler !== undefined ? runner : undefined;
  const given = [options.on !== undefined && 'on', options.handoff !== undefined && 'handoff', single !== undefined && 'a handler'].filter(Boolean);
  if (given.length > 1 || (given.length === 0 && route === undefined)) {
    const choices =
      route !== undefined ? 'on and handoff (or neither: the route after the middleware answers)' : runner === undefined ? 'on and handoff' : 'on, handoff and a handler function';
    throw new WebhookOptionsError(`svc-webhooks: say what runs for each delivery with exactly one of ${choices}; given: ${given.join(' and ') || 'none'}`);
  }
  if (single !== undefined && typeof single.handler !== 'function') throw new WebhookOptionsError('svc-webhooks: the handler must be a function');
  if (options.on === undefined) {
    const stray = ONLY_WITH_ON.find((name) => options[name] !== undefined);
    if (stray !== undefined) throw new WebhookOptionsError(`svc-webhooks: ${stray} takes effect only with on`);
  }

  if (options.on !== undefined) {
    const dispatcher = createDispatcher(options as HandlerOptions<EventSchemas>, receiverErrorLog(logger));
    // A handler entry's handlers get what its single handler would: the delivery with the host's request and context.
    const contextOf = runner !== undefined && 'context' in runner ? runner.context : undefined;
    return {
      run: (request, delivery) => {
        const dispatched = dispatcher.dispatch(contextOf === undefined ? delivery : (contextOf(request, delivery) as WebhookDelivery));
        return whenSettled(dispatched, handlersOutcome);
      },
      runsFor: dispatcher.handles,
    };
  }
  if (options.handoff !== undefined) {
    const handoff = checkHandoff(options.handoff);
    const onHandlerError = checkOnHandlerError(options.onHandlerError, handoffErrorLog(logger));
    return {
      run: async (_request, delivery) => {
        const outcome = await handOff(handoff, delivery, onHandlerError);
        return { kind: 'decided', response: handoffAnswer(outcome), outcome: outcome.kind === 'failed' ? 'handoff_failed' : outcome.kind };
      },
      runsFor: always,
    };
  }
  if (single !== undefined) {
    const onHandlerError = checkOnHandlerError(options.onHandlerError, receiverErrorLog(logger));
    return { run: (request, delivery) => runSingleHandler(single, onHandlerError, request, delivery), runsFor: always };
  }
  if (options.onHandlerError !== undefined) throw new WebhookOptionsError('svc-webhooks: onHandlerError takes effect only with on, handoff or a handler');
  const routed = route!;
  return {
    run: async (request, delivery) => ({ kind: 'routed', status: await routed(request, delivery) }),
    runsFor: always,
  };
}

/** What a handler that returned nothing led to: 204, the same object each time. */
const PROCESSED: Outcome<never> = Object.freeze({ kind: 'decided', response: accepted(), outcome: 'processed' });

/** What the handlers of `on` led to; a handler that resolved, most deliveries, is the same object each time. */
function handlersOutcome(outcome: HandlerOutcome): Outcome<never> {
  if (outcome.kind === 'handled') return PROCESSED;
  return { kind: 'decided', response: handlersAnswer(outcome), outcome: outcome.kind === 'failed' ? outcome.error.code : 'unhandled' };
}

/**
 * Runs an entry's single handler for `delivery`: its answer, or 204 when it
 * returns nothing. A throw, a rejection or a value that is no answer
 * becomes 500 `handler_failed`. Never rejects. A handler that answers at
 * once (no thenable) is answered at once, without a turn of the event loop
 * and without a closure made for it.
 */
function runSingleHandler<R, A>(single: SingleHandler<R, A>, onHandlerError: HandlerErrorCallback, request: R, delivery: WebhookDelivery): Outcome<A> | Promise<Outcome<A>> {
  let returned: unknown;
  try {
    returned = (single.handler as (event: unknown, context: unknown) => unknown)(delivery.event, single.context(request, delivery));
  } catch (error) {
    return handlerFailure(onHandlerError, error, delivery);
  }
  if (!isThenable(returned)) return singleOutcome(single, onHandlerError, returned, delivery);
  // Promise.resolve adopts a thenable as `await` does, one whose `then` throws included.
  return Promise.resolve(returned).then(
    (value) => singleOutcome(single, onHandlerError, value, delivery),
    (error: unknown) => handlerFailure(onHandlerError, error, delivery),
  );
}

/** What the single handler's `value` led to: 204 for nothing, its answer, or 500 for a value that is no answer. */
function singleOutcome<R, A>(single: SingleHandler<R, A>, onHandlerError: HandlerErrorCallback, value: unknown, delivery: WebhookDelivery): Outcome<A> {
  if (value === undefined) return PROCESSED;
  const { shape } = single;
  try {
    // The answer's own getters are the user's code, and may throw.
    if (!shape.isAnswer(value)) throw new WebhookOptionsError(`svc-webhooks: the webhook handler must return ${shape.described} or nothing`);
    return { kind: 'answered', answer: value, status: shape.statusOf(value) };
  } catch (error) {
    return handlerFailure(onHandlerError, error, delivery);
  }
}

/** 500 `handler_failed` for what the single handler threw or rejected with, told to `onHandlerError`. */
function handlerFailure(onHandlerError: HandlerErrorCallback, error: unknown, delivery: WebhookDelivery): Outcome<never> {
  return { kind: 'decided', response: refused(handlerFailed(onHandlerError, error, delivery)), outcome: 'handler_failed' };
}
