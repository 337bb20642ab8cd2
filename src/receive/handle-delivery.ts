import type { BodyLimits } from './body-limits.js';
import { WebhookVerificationError } from '../core/errors.js';
import type { WebhookHeaders } from '../core/headers.js';
import { checkCallback } from '../core/option-checks.js';
import type { WebhookPayload } from '../core/payload.js';
import type { VerifiedDelivery } from '../core/verify-delivery.js';
import { createReceiver, errorResponse, type ReceiverOptions, type WebhookResponse } from './receiver.js';

/** Options of the adapters that call the handler themselves and answer for it (Fetch, Lambda). */
export interface DeliveryOptions extends ReceiverOptions {
  /**
   * Told about an error the handler threw (or rejected with). The sender gets
   * a fixed 500 that never carries the error's message, and the dedup claim
   * is released so the retry runs the handler again.
   * @default logs one line with console.error
   */
  readonly onHandlerError?: (error: unknown) => void;
}

/** One request, as an adapter hands it over. */
export interface DeliveryRequest<A> {
  /**
   * The raw body, or its reading. A `WebhookVerificationError` it rejects with
   * (such as `payload_too_large`) is answered like any refusal; anything else propagates.
   */
  readonly body: WebhookPayload | Promise<WebhookPayload>;
  readonly headers: WebhookHeaders;
  /** Calls the user's code with the verified delivery: its own answer, or `undefined` for 204. */
  readonly run: (delivery: VerifiedDelivery) => A | undefined | Promise<A | undefined>;
  /** The HTTP status of an answer of `run`, which settles the dedup claim. It may throw for an answer that is none. */
  readonly statusOf: (answer: A) => number;
  /**
   * Takes the settling of the claim where the platform keeps work alive after
   * the answer is sent (a Worker's `ctx.waitUntil`). Without it the answer
   * waits for the settling, since a platform may freeze or cut what runs after.
   */
  readonly waitUntil?: (settling: Promise<void>) => void;
}

/** A response ready to write: the body already serialized, `undefined` for none. */
export interface PlainResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string | undefined;
}

/** Why a request was refused, for an adapter's `onError`. */
export interface Refusal {
  readonly error: WebhookVerificationError;
  /** Headers the refusal needs whoever answers it, such as Retry-After. */
  readonly headers: Readonly<Record<string, string>>;
}

/** What to send: the handler's own answer, or a response the adapter writes as it is. */
export type DeliveryResult<A> =
  | { readonly answer: A }
  /** `refusal` is set when the request was refused rather than handled. */
  | { readonly response: PlainResponse; readonly refusal?: Refusal };

export interface DeliveryHandling extends BodyLimits {
  /** Verifies and claims, runs the handler, settles the claim by its outcome. */
  handle<A>(request: DeliveryRequest<A>): Promise<DeliveryResult<A>>;
}

const NO_CONTENT: DeliveryResult<never> = { response: { status: 204, headers: {}, body: undefined } };
// Fixed, so that nothing from the handler's error (a query, a token) reaches the sender.
const HANDLER_FAILED: DeliveryResult<never> = {
  response: plain(errorResponse(new WebhookVerificationError('handler_failed', 'the webhook handler failed'))),
};

/**
 * The whole request path of an adapter that owns the handler call: verify and
 * claim, run the handler, settle the claim by the outcome (a 2xx completes,
 * anything else or a throw releases), and turn refusals and throws into
 * responses. Framework-free; checks options once and throws `TypeError`.
 */
export function createDeliveryHandling(options: DeliveryOptions): DeliveryHandling {
  const receiver = createReceiver(options);
  const { onHandlerError = logHandlerError } = options;
  checkCallback('onHandlerError', onHandlerError);

  return {
    maxPayloadBytes: receiver.maxPayloadBytes,
    bodyTimeoutMs: receiver.bodyTimeoutMs,
    async handle<A>({ body, headers, run, statusOf, waitUntil }: DeliveryRequest<A>): Promise<DeliveryResult<A>> {
      let payload: WebhookPayload;
      try {
        payload = await body;
      } catch (error) {
        return refused(errorResponse(error), error as WebhookVerificationError);
      }
      const reception = await receiver.receive(payload, headers);
      if (reception.action === 'respond') return refused(reception.response, reception.error);

      let result: DeliveryResult<A>;
      let status: number;
      try {
        const answer = await run(reception.delivery);
        [result, status] = answer === undefined ? [NO_CONTENT, 204] : [{ answer }, statusOf(answer)];
      } catch (error) {
        tell(onHandlerError, error);
        [result, status] = [HANDLER_FAILED, 500];
      }
      if (reception.settle) {
        // The receiver reports store failures itself; this only keeps a throwing report from escaping.
        const settling = reception.settle(status).catch(() => undefined);
        if (waitUntil) waitUntil(settling);
        else await settling;
      }
      return result;
    },
  };
}

function refused(response: WebhookResponse, error: WebhookVerificationError | undefined): DeliveryResult<never> {
  return { response: plain(response), refusal: error && { error, headers: response.headers } };
}

/** The receiver's JSON response, serialized. */
function plain({ status, headers, body }: WebhookResponse): PlainResponse {
  return { status, headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) };
}

/** Calls a user's callback so that neither a throw nor a rejection escapes. */
function tell(callback: (error: unknown) => unknown, error: unknown): void {
  try {
    Promise.resolve(callback(error)).catch(() => undefined);
  } catch {
    // A failing error report has nowhere left to go.
  }
}

function logHandlerError(error: unknown): void {
  const reason = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  console.error(`svc-webhooks: the webhook handler failed (${reason}); answered 500 so the sender retries`);
}
