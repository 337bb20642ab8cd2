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
import { declaredLengthRefusal } from '../src/declared-length.js';
import type { WebhookVerificationError } from '../src/errors.js';
import type { WebhookEvent } from '../src/event.js';
import { checkCallback, createReceiver, errorResponse, type ReceiverOptions, type WebhookResponse } from '../src/receiver.js';

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
    const tooLarge = declaredLengthRefusal(c.req.header('content-length'), maxPayloadBytes);
    if (tooLarge) return respond(errorResponse(tooLarge), tooLarge, c);
    const reception = await receiver.receive(await c.req.arrayBuffer(), c.req.raw.headers);
    if (reception.action === 'respond') return respond(reception.response, reception.error, c);
    c.set('webhook', reception.delivery.event);
    c.set('webhookId', reception.delivery.id);
    const { settle } = reception;
    if (settle === undefined) return next();
    try {
      await next();
    } catch (error) {
      await settle(500);
      throw error;
    }
    await settle(c.res.status);
  });
}
