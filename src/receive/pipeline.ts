/**
 * The one request path of every entry (Express, Hono, Fastify, Fetch,
 * Lambda), top to bottom: read the body, verify it, claim its event, run the
 * user's code (the route, the handlers of `on`, or the entry's single
 * handler), settle the claim by the answer, and answer. An entry supplies a
 * `Platform`: a few small functions that know its requests and its answers.
 */
import { WebhookVerificationError } from '../core/errors.js';
import type { WebhookEvent } from '../core/event.js';
import type { WebhookHeaders } from '../core/headers.js';
import type { WebhookPayload } from '../core/payload.js';
import type { VerifiedDelivery } from '../core/verify-delivery.js';
import { bodyRefusal, SenderGoneError, type BodyLimits } from './body-limits.js';
import { DeadlineQueue, withinDeadline } from './deadlines.js';
import { deliveries, handlerRuns, outcomeOf, type DeliveryOutcome, type EntryName } from './diagnostics.js';
import { createDispatcher, runSingleHandler, type AnswerShape, type HandlerAnswer } from './dispatch.js';
import { checkOnHandlerError } from './handler-options.js';
import { checkHandoff, handOff, type Handoff } from './handoff.js';
import type { EventSchemas, HandlerOptions } from './handler-types.js';
import { createReceiver, type ReceiverOptions } from './receiver.js';
import type { TenantOf } from './tenants.js';
import type { DecidedResponse, WebhookResponse } from './responses.js';
import { checkOnErrorOptions, isThenable, reasonOf, runOnError, type OnErrorOptions } from './user-callbacks.js';

/** The options every entry takes, before its own `onError`. */
export interface EntryOptions<S extends EventSchemas = {}> extends ReceiverOptions, OnErrorOptions, HandlerOptions<S> {
  /**
   * Hands each event to a durable queue (a `Handoff`: `hand(event, context)`
   * resolving once the job is recorded) in place of `on`, a route or a handler: under the
   * claim, answered 202 once the queue recorded it, 503 `handoff_failed` with
   * `Retry-After` when it did not.
   * @default undefined (the handlers of `on`, the route or the handler run)
   */
  readonly handoff?: Handoff;
}

/**
 * How long an answer of the user's handlers waits for the store to record
 * its outcome. A store answers in milliseconds, and waiting for it means a
 * retry finds the claim settled and a runtime that stops work once the
 * answer is sent (a Worker, a frozen Lambda) does not cut the settle off. A
 * store that keeps failing (or retries) must not hold the answer past the
 * sender's 10 s: the settle goes on after the answer then.
 */
export const SETTLE_WAIT_MS = 1000;

/** The tenant of every request to a receiver of one endpoint: none, and nothing is built per request to say so. */
const noTenant = (): undefined => undefined;

/** What an entry knows of its platform's requests (`R`) and answers (`A`). */
export interface Platform<R, A> {
  /** Which entry this is, for the diagnostics channels. */
  readonly entry: EntryName;
  /**
   * The raw body. Rejects with a `WebhookVerificationError` to refuse the
   * request (past the limits, already parsed), with `SenderGoneError` when the
   * connection broke off; anything else is a bug and propagates.
   */
  body(request: R, limits: BodyLimits): WebhookPayload | PromiseLike<WebhookPayload>;
  headers(request: R): WebhookHeaders;
  /** Sends an answer decided here: `body` as JSON, or none when it is `undefined`. */
  send(request: R, response: WebhookResponse): A;
  /** The status the request was answered with, once answered: `answer` is what the entry returns (`undefined` where the route answered). */
  statusOf(request: R, answer: A | undefined): number;
  /** The request's sender left mid-body: nobody is left to answer. Absent where a body cannot break off (Lambda). */
  senderGone?(request: R): A;
  /**
   * Calls the user's `onError` for `error` and resolves to its answer once it
   * has answered, with `headers` (Retry-After, Connection: close) on it where
   * it set none of its own; rejects when it answered nothing. Absent without
   * an `onError`.
   */
  readonly onError?: ((request: R, error: WebhookVerificationError, headers: Readonly<Record<string, string>>) => PromiseLike<A>) | undefined;
  /** The request as the user's own functions take it (`tenant`): Express's `req`, Hono's `c`, the Fetch `Request`, the Lambda event. */
  userRequest(request: R): unknown;
  /** Keeps `work` alive after the answer where the runtime may cut it off (a Worker's `waitUntil`). */
  keepAlive?(request: R, work: Promise<void>): void;
  /**
   * Middleware: hands the delivery to the route, which answers by itself;
   * resolves with the status it answered.
   */
  route?(request: R, delivery: VerifiedDelivery): PromiseLike<number>;
  /** Entries called with a single handler (Fetch, Lambda): what its answers look like, and what it gets besides the event. */
  readonly single?: {
    readonly shape: AnswerShape<A>;
    context(request: R, delivery: VerifiedDelivery): unknown;
  };
}

/** An entry's single handler: the event, and the context its platform gives. */
export type SingleHandler = (event: WebhookEvent, context: never) => unknown;

/** What running the user's code led to: an answer decided here, the single handler's own, or the route's, already sent. */
type Outcome<A> = DecidedResponse | HandlerAnswer<A> | { readonly routed: true; readonly status: number };

/** A request watched for the delivery channel: when its handling started. Only made while someone listens. */
interface Watch {
  readonly started: number;
}

/**
 * Checks the options once and returns the request path; throws `TypeError`.
 * Without a `route`, the platform needs exactly one of `on` and `handler`.
 * The path resolves to what the entry returns: the platform's answer, or
 * `undefined` once the route answered. It rejects only with what `body`
 * rejects with that is not a refusal.
 */
export function createPipeline<R, A, S extends EventSchemas = {}>(
  // Each entry declares `tenant` for its own request: `EntryOptions` stays assignable to every entry's options.
  options: EntryOptions<S> & { readonly tenant?: TenantOf<never> },
  platform: Platform<R, A>,
  handler?: SingleHandler,
): (request: R) => Promise<A | undefined> {
  const receiver = createReceiver(options);
  const onErrorTimeoutMs = checkOnErrorOptions(options);
  if (handler !== undefined && typeof handler !== 'function') throw new TypeError('svc-webhooks: the handler must be a function');
  const handoff = checkHandoff(options.handoff);
  if (handoff !== undefined && (options.on !== undefined || handler !== undefined)) {
    throw new TypeError('svc-webhooks: handoff takes the place of on and of a handler: give only one of them');
  }
  if (platform.route === undefined && handoff === undefined && (options.on === undefined) === (handler === undefined)) {
    throw new TypeError('svc-webhooks: verifyWebhook needs either on in its options or a handler function, not both');
  }
  // Without on, a single handler or the handoff takes every event, and onHandlerError with them.
  const dispatcher = createDispatcher(options, handler !== undefined || handoff !== undefined);
  const onHandlerError = checkOnHandlerError(options.onHandlerError);
  const settleWaits = new DeadlineQueue(SETTLE_WAIT_MS);
  const { tenant } = options;

  /** Answers what was decided here: by the user's `onError` for a refusal, if it answers in time, else as decided. */
  const answer = (request: R, decided: DecidedResponse): A | Promise<A> => {
    const { error, headers } = decided;
    if (error === undefined || platform.onError === undefined) return platform.send(request, decided);
    return runOnError(() => platform.onError!(request, error, headers), onErrorTimeoutMs).then((custom) =>
      custom === undefined ? platform.send(request, decided) : custom.value,
    );
  };

  /** Runs the user's code for the delivery; never rejects. */
  const run = (request: R, delivery: VerifiedDelivery): Promise<Outcome<A>> => {
    const { event } = delivery;
    const context = contextOf(delivery);
    if (handoff !== undefined) return handOff(handoff, event, context, onHandlerError);
    if (dispatcher !== undefined) return dispatcher.dispatch(event, context);
    if (handler !== undefined) {
      const { shape, context: singleContext } = platform.single!;
      return runSingleHandler(() => handler(event, singleContext(request, delivery) as never), shape, onHandlerError, event, context);
    }
    return Promise.resolve(platform.route!(request, delivery)).then((status) => ({ routed: true, status }));
  };

  /** Publishes the delivery message of a watched request once `answering` is sent, and passes its answer on. */
  const told = async (request: R, watch: Watch, answering: A | PromiseLike<A> | undefined, outcome: DeliveryOutcome, delivery?: VerifiedDelivery) => {
    const answered = await answering;
    deliveries!.publish({
      entry: platform.entry,
      status: platform.statusOf(request, answered),
      outcome,
      ...(delivery && contextOf(delivery)),
      ...(delivery && { type: delivery.event.type }),
      ...receiver.skewOf(platform.headers(request)),
      durationMs: performance.now() - watch.started,
    });
    return answered;
  };

  /** Answers a refusal or a claim's answer, telling the delivery channel when watched. */
  const refuse = (request: R, watch: Watch | undefined, decided: DecidedResponse, delivery?: VerifiedDelivery) => {
    const answering = answer(request, decided);
    if (watch === undefined) return answering;
    // The only answer decided here without an error is the claim's duplicate.
    const outcome = decided.error === undefined ? 'duplicate' : outcomeOf(decided.status, decided.error, false);
    return told(request, watch, answering, outcome, delivery);
  };

  return async function receive(request) {
    const watch: Watch | undefined = deliveries?.hasSubscribers ? { started: performance.now() } : undefined;

    // 1. The body, within the limits. A body at hand (Lambda) is taken without a turn of the event loop.
    let payload: WebhookPayload;
    try {
      const read = platform.body(request, receiver.limits);
      payload = isThenable(read) ? await read : read;
    } catch (error) {
      // Nobody is left to answer, nor anything to tell.
      if (error instanceof SenderGoneError && platform.senderGone !== undefined) return platform.senderGone(request);
      if (!(error instanceof WebhookVerificationError)) throw error;
      return refuse(request, watch, bodyRefusal(error));
    }

    // 2. Verify it, with its tenant's secret where the receiver serves many.
    const verifying = receiver.verify(payload, platform.headers(request), tenant === undefined ? noTenant : () => tenant(platform.userRequest(request) as never));
    const verified = isThenable(verifying) ? await verifying : verifying;
    if (!('event' in verified)) return refuse(request, watch, verified);
    const delivery = verified;

    // 3. Claim its event: a duplicate, one in progress or a failing store is answered here.
    const claiming = receiver.claim(delivery);
    const claim = isThenable(claiming) ? await claiming : claiming;
    if (typeof claim === 'object') return refuse(request, watch, claim, delivery);

    // 4. Run the user's code, in a span of the tracing channel while someone listens there and code of theirs runs.
    const { event } = delivery;
    const traced = handlerRuns?.hasSubscribers && (dispatcher === undefined || dispatcher.handles(event.type));
    const outcome = traced
      ? await handlerRuns!.tracePromise(() => run(request, delivery), { entry: platform.entry, ...contextOf(delivery), type: event.type })
      : await run(request, delivery);
    const routed = 'routed' in outcome;

    // 5. Settle the claim by the answer, in the background where the platform may cut it off; an answer
    // not yet sent waits for it, within bounds.
    if (claim !== undefined) {
      const settling = claim(outcome.status);
      keepAlive(request, settling);
      if (!routed) await withinDeadline(settleWaits, settling, () => undefined);
    }

    // 6. Answer, unless the route did.
    const answering = routed ? undefined : 'answer' in outcome ? outcome.answer : answer(request, outcome);
    if (watch === undefined) return answering;
    const ran = !('body' in outcome) || dispatcher === undefined || dispatcher.handles(event.type);
    return told(request, watch, answering, outcomeOf(outcome.status, 'error' in outcome ? outcome.error : undefined, ran), delivery);
  };

  /** What the user's code learns of a delivery besides its event. */
  function contextOf({ id, keyId, tenant }: VerifiedDelivery): { readonly id: string; readonly keyId: string; readonly tenant?: string } {
    return tenant === undefined ? { id, keyId } : { id, keyId, tenant };
  }

  /** Hands the settling to the platform; a platform that throws for it changes no answer, and the settle runs on regardless. */
  function keepAlive(request: R, settling: Promise<void>): void {
    try {
      platform.keepAlive?.(request, settling);
    } catch (error) {
      console.error(`svc-webhooks: the platform's waitUntil threw (${reasonOf(error)}); the claim is settled without it`);
    }
  }
}
