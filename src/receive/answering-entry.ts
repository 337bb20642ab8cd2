/**
 * The request path of the entries that answer for the user's code (Fetch,
 * Lambda): verify and claim, run the handlers of `on` or the single handler
 * under the claim, settle it by the answer, and let the user's `onError`
 * answer refusals. Framework-free: an entry supplies how its answers look
 * and what its user's callbacks receive.
 */
import type { WebhookVerificationError } from '../core/errors.js';
import type { WebhookEvent } from '../core/event.js';
import type { WebhookHeaders } from '../core/headers.js';
import type { WebhookPayload } from '../core/payload.js';
import type { VerifiedDelivery } from '../core/verify-delivery.js';
import { answerUnderClaim, type WaitUntil } from './answer-under-claim.js';
import type { BodyLimits } from './body-limits.js';
import { createDispatcher } from './dispatch.js';
import { accepted, refused, type DispatchResult } from './dispatch-result.js';
import type { EventSchemas, HandlerOptions } from './event-handlers.js';
import { checkOnHandlerError, handlerFailed } from './handler-failure.js';
import { checkOnErrorOptions, runOnError, type OnErrorOptions } from './on-error.js';
import { createReceiver, errorResponse, type ReceiverOptions, type WebhookResponse } from './receiver.js';

/** The options of an answering entry, before its own `onError`. */
export interface AnsweringOptions<S extends EventSchemas = {}> extends ReceiverOptions, OnErrorOptions, HandlerOptions<S> {}

/** What the options of an entry called with a single handler leave out: that handler answers every event. */
export interface WithoutHandlerOptions {
  readonly on?: undefined;
  readonly schemas?: undefined;
  readonly onUnknown?: undefined;
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

/** The user's single handler, with whatever context the entry gives it. */
export type SingleHandler<C> = (event: WebhookEvent, context: C) => unknown;

/** One request, as an entry hands it over. */
export interface AnsweringRequest<A, C> {
  /**
   * The raw body, or its reading. A `WebhookVerificationError` it rejects with
   * (such as `payload_too_large`) is answered like any refusal; anything else propagates.
   */
  readonly body: WebhookPayload | Promise<WebhookPayload>;
  readonly headers: WebhookHeaders;
  /** The context the single handler gets with the delivery's event. */
  readonly contextOf: (delivery: VerifiedDelivery) => C;
  /** Calls the user's `onError` for this request, when there is one. */
  readonly onError?: (error: WebhookVerificationError) => unknown;
  /** `answer` with those of `headers` it lacks: Retry-After and the like apply whoever answers. */
  readonly withHeaders: (answer: A, headers: Readonly<Record<string, string>>) => A;
  /** Takes the settling of the claim where the platform keeps work alive after the answer (a Worker's `ctx.waitUntil`). */
  readonly waitUntil?: WaitUntil;
}

/** What to send: an answer of the user's code, or a response the entry writes as it is (a JSON body, or none on 204). */
export type AnsweringResult<A> = { readonly answer: A } | { readonly response: WebhookResponse };

export interface AnsweringEntry<A, C> extends BodyLimits {
  /** Answers one request; rejects only with what `body` rejects with that is no `WebhookVerificationError`. */
  answer(request: AnsweringRequest<A, C>): Promise<AnsweringResult<A>>;
}

/** What the user's code for one event led to: its own answer, or one decided here. */
type Outcome<A> = { readonly answer: A } | DispatchResult;

/**
 * Checks the options and `handler` once; throws `TypeError`, also unless
 * exactly one of `on` and `handler` is given.
 */
export function createAnsweringEntry<A, C>(
  options: AnsweringOptions<EventSchemas>,
  handler: SingleHandler<C> | undefined,
  shape: AnswerShape<A>,
): AnsweringEntry<A, C> {
  const receiver = createReceiver(options);
  const onErrorTimeoutMs = checkOnErrorOptions(options);
  if (handler !== undefined && typeof handler !== 'function') throw new TypeError('svc-webhooks: the handler must be a function');
  if ((options.on === undefined) === (handler === undefined)) {
    throw new TypeError('svc-webhooks: verifyWebhook needs either on in its options or a handler function, not both');
  }
  // Without on there is a handler, which takes every event and onHandlerError with them.
  const dispatcher = createDispatcher(options, true);
  const onHandlerError = checkOnHandlerError(options.onHandlerError);
  const statusOf = (outcome: Outcome<A>): number => ('answer' in outcome ? shape.statusOf(outcome.answer) : outcome.status);

  /** Runs the single handler; a throw, or a value that is no answer, becomes 500 `handler_failed`. */
  const runHandler = async ({ id, event }: VerifiedDelivery, context: C): Promise<Outcome<A>> => {
    try {
      const value = await handler!(event, context);
      if (value === undefined) return accepted();
      if (!shape.isAnswer(value)) throw new TypeError(`svc-webhooks: the webhook handler must return ${shape.described} or nothing`);
      return { answer: value };
    } catch (error) {
      return refused(handlerFailed(onHandlerError, error, event, { id }));
    }
  };

  /** The refusal's answer by `onError` (bounded, caught, its headers kept), or else the default one. */
  const refusal = async (
    response: WebhookResponse,
    error: WebhookVerificationError | undefined,
    request: AnsweringRequest<A, C>,
  ): Promise<AnsweringResult<A>> => {
    const { onError, withHeaders } = request;
    if (error && onError) {
      const custom = await runOnError(async () => {
        const value = await onError(error);
        if (!shape.isAnswer(value)) throw new TypeError(`it answered no ${shape.described}`);
        return value;
      }, onErrorTimeoutMs);
      if (custom) return { answer: withHeaders(custom.value, response.headers) };
    }
    return { response };
  };

  return {
    maxPayloadBytes: receiver.maxPayloadBytes,
    bodyTimeoutMs: receiver.bodyTimeoutMs,
    async answer(request) {
      let payload: WebhookPayload;
      try {
        payload = await request.body;
      } catch (error) {
        return refusal(errorResponse(error), error as WebhookVerificationError, request);
      }
      const reception = await receiver.receive(payload, request.headers);
      if (reception.action === 'respond') return refusal(reception.response, reception.error, request);
      const run = (delivery: VerifiedDelivery): Promise<Outcome<A>> =>
        dispatcher ? dispatcher.dispatch(delivery.event) : runHandler(delivery, request.contextOf(delivery));
      const outcome = await answerUnderClaim(reception, run, statusOf, request.waitUntil);
      if ('answer' in outcome) return outcome;
      const { error, ...response } = outcome;
      return refusal(response, error, request);
    },
  };
}
