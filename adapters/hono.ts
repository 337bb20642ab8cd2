/**
 * svc-webhooks/hono: `verifyWebhook(options)` is Hono middleware that verifies
 * the raw body and sets `c.var.webhook` (the typed event) and
 * `c.var.webhookId` (the verified `webhook-id`). Hono caches the body, so the
 * route may still read it. A refused request is answered here with
 * `{ error: { code, message } }` and the route never runs. With `on`, it runs
 * the handler of the event's type and answers every request itself: no route
 * is needed.
 */
import type { Context, MiddlewareHandler } from 'hono';
import { createMiddleware } from 'hono/factory';
import type { ContentfulStatusCode, StatusCode } from 'hono/utils/http-status';
import { WebhookVerificationError } from '../src/core/errors.js';
import type { WebhookEvent } from '../src/core/event.js';
import { bodyRefusal, SenderGoneError, type BodyLimits } from '../src/receive/body-limits.js';
import { checkOnErrorOptions, runOnError, type OnErrorOptions } from '../src/receive/on-error.js';
import { readWebBody } from '../src/receive/read-web-body.js';
import type { EventSchemas, HandlerOptions } from '../src/receive/event-handlers.js';
import { createHandlingReceiver } from '../src/receive/handling-receiver.js';
import type { ReceiverOptions, WebhookResponse } from '../src/receive/receiver.js';
import { isResponse, withMissingHeaders } from '../src/receive/web-response.js';

declare module 'hono' {
  interface ContextVariableMap {
    /** The verified event; set only on routes behind `verifyWebhook`. */
    webhook: WebhookEvent;
    /** The verified `webhook-id`, the key to deduplicate on; set only behind `verifyWebhook`. */
    webhookId: string;
  }
}

export interface HonoWebhookOptions<S extends EventSchemas = {}> extends ReceiverOptions, OnErrorOptions, HandlerOptions<S> {
  /**
   * Answers a refused request instead of the default JSON response, within
   * `onErrorTimeoutMs`. The route is not called either way. With `on`, the
   * handlers' refusals (`handler_failed`, `invalid_event_data`,
   * `unknown_event_type`) come here too.
   * @default answers `error.status` with `{ error: { code, message } }`
   */
  readonly onError?: (error: WebhookVerificationError, c: Context) => Response | Promise<Response>;
}

export function verifyWebhook<S extends EventSchemas = {}>(options: HonoWebhookOptions<S>): MiddlewareHandler {
  const receiver = createHandlingReceiver(options);
  const { onError } = options;
  const onErrorTimeoutMs = checkOnErrorOptions(options);

  // Headers such as Retry-After apply whoever writes the body.
  const respond = async (response: WebhookResponse, error: WebhookVerificationError | undefined, c: Context): Promise<Response> => {
    for (const [name, value] of Object.entries(response.headers)) c.header(name, value);
    const answer = error && onError ? await runOnError(async () => responseOf(await onError(error, c)), onErrorTimeoutMs) : undefined;
    if (answer) return withMissingHeaders(answer.value, response.headers);
    if (response.body === undefined) return c.body(null, response.status as StatusCode);
    return c.json(response.body, response.status as ContentfulStatusCode);
  };

  return createMiddleware(async (c, next) => {
    let payload: ArrayBuffer;
    try {
      payload = await rawBody(c, receiver);
    } catch (error) {
      // Its sender is gone: this answer reaches nobody, and nothing is thrown for Hono to log.
      if (error instanceof SenderGoneError) return c.body(null, 400);
      if (!(error instanceof WebhookVerificationError)) throw error;
      return respond(bodyRefusal(error), error, c);
    }
    const reception = await receiver.receive(payload, c.req.raw.headers);
    if (reception.action === 'respond') return respond(reception.response, reception.error, c);
    c.set('webhook', reception.delivery.event);
    c.set('webhookId', reception.delivery.id);
    // Hono turns a route's error into its error response, so c.res holds the outcome either way.
    await next();
    if (reception.settle) settleAfterResponse(c, reception.settle(c.res.status));
  });
}

/**
 * Lets the settlement run on after the response goes out, since store
 * retries may take up to a lease and the sender waits 10 s at most. Where
 * the runtime may cut work left after the response (Workers), it is handed
 * to `executionCtx.waitUntil`; elsewhere it just runs on. It never rejects.
 */
function settleAfterResponse(c: Context, settling: Promise<void>): void {
  try {
    // Hono's getter throws when the runtime gave no execution context.
    c.executionCtx.waitUntil(settling);
  } catch {
    // No waitUntil: nothing cuts the work short.
  }
}

/** The raw body, read within the receiver's limits and never whole past its size limit. */
async function rawBody(c: Context, limits: BodyLimits): Promise<ArrayBuffer> {
  const body = await readWebBody(c.req.raw.body, c.req.header('content-length'), limits);
  // Where c.req.arrayBuffer() would have left it, so the route can read the body again. Hono caches
  // the promise (its other readers chain on it), though its type names the value.
  c.req.bodyCache.arrayBuffer = Promise.resolve(body) as unknown as ArrayBuffer;
  return body;
}

function responseOf(value: unknown): Response {
  if (!isResponse(value)) throw new TypeError('it answered no Response');
  return value;
}
