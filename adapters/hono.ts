/**
 * svc-webhooks/hono: `verifyWebhook(options)` is Hono middleware that verifies
 * the raw body and sets `c.var.webhook` (the typed event) and
 * `c.var.webhookId` (the verified `webhook-id`). Hono caches the body, so the
 * route may still read it. A refused request is answered here with
 * `{ error: { code, message } }` and the route never runs.
 */
import type { Context, MiddlewareHandler } from 'hono';
import { createMiddleware } from 'hono/factory';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { checkDeclaredLength } from '../src/receive/declared-length.js';
import { WebhookVerificationError } from '../src/core/errors.js';
import type { WebhookEvent } from '../src/core/event.js';
import { readWebBody } from '../src/receive/read-web-body.js';
import { checkCallback } from '../src/core/option-checks.js';
import { createReceiver, errorResponse, type ReceiverOptions, type WebhookResponse } from '../src/receive/receiver.js';

declare module 'hono' {
  interface ContextVariableMap {
    /** The verified event; set only on routes behind `verifyWebhook`. */
    webhook: WebhookEvent;
    /** The verified `webhook-id`, the key to deduplicate on; set only behind `verifyWebhook`. */
    webhookId: string;
  }
}

export interface HonoWebhookOptions extends ReceiverOptions {
  /**
   * Answers a refused request instead of the default JSON response. The route
   * is not called either way.
   * @default answers `error.status` with `{ error: { code, message } }`
   */
  readonly onError?: (error: WebhookVerificationError, c: Context) => Response | Promise<Response>;
}

export function verifyWebhook(options: HonoWebhookOptions): MiddlewareHandler {
  const receiver = createReceiver(options);
  const { maxPayloadBytes } = receiver;
  const { onError } = options;
  checkCallback('onError', onError);

  // Headers such as Retry-After apply whoever writes the body.
  const respond = (
    response: WebhookResponse,
    error: WebhookVerificationError | undefined,
    c: Context,
  ): Response | Promise<Response> => {
    for (const [name, value] of Object.entries(response.headers)) c.header(name, value);
    if (error && onError) return onError(error, c);
    return c.json(response.body, response.status as ContentfulStatusCode);
  };

  return createMiddleware(async (c, next) => {
    let payload: ArrayBuffer;
    try {
      payload = await rawBody(c, maxPayloadBytes);
    } catch (error) {
      if (!(error instanceof WebhookVerificationError)) throw error;
      return respond(errorResponse(error), error, c);
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

/** The raw body, refused past `maxBytes` without ever reading a body of unknown length whole. */
async function rawBody(c: Context, maxBytes: number): Promise<ArrayBuffer> {
  const length = c.req.header('content-length');
  checkDeclaredLength(length, maxBytes);
  if (length !== undefined) return c.req.arrayBuffer();
  const body = await readWebBody(c.req.raw.body, maxBytes);
  // Where c.req.arrayBuffer() would have left it, so the route can read the body again. Hono caches
  // the promise (its other readers chain on it), though its type names the value.
  c.req.bodyCache.arrayBuffer = Promise.resolve(body) as unknown as ArrayBuffer;
  return body;
}
