/**
 * svc-webhooks/express: `verifyWebhook(options)` is Express middleware that
 * reads the raw body itself, verifies it, and hands the route `req.webhook`
 * (the typed event) and `req.webhookId` (the verified `webhook-id`). A refused
 * request is answered here with `{ error: { code, message } }` and the route
 * never runs.
 */
import { Buffer } from 'node:buffer';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { WebhookVerificationError } from '../src/core/errors.js';
import type { WebhookEvent } from '../src/core/event.js';
import type { WebhookPayload } from '../src/core/payload.js';
import { readNodeBody } from '../src/receive/read-node-body.js';
import { checkCallback } from '../src/core/option-checks.js';
import { createReceiver, errorResponse, type ReceiverOptions, type WebhookResponse } from '../src/receive/receiver.js';
import { settleWhenEnded } from '../src/receive/settle-when-ended.js';

declare global {
  namespace Express {
    interface Request {
      /** The verified event; set only on routes behind `verifyWebhook`. */
      webhook: WebhookEvent;
      /** The verified `webhook-id`, the key to deduplicate on; set only behind `verifyWebhook`. */
      webhookId: string;
    }
  }
}

export interface ExpressWebhookOptions extends ReceiverOptions {
  /**
   * Answers a refused request instead of the default JSON response. The route
   * is not called either way.
   * @default answers `error.status` with `{ error: { code, message } }`
   */
  readonly onError?: (error: WebhookVerificationError, req: Request, res: Response, next: NextFunction) => void;
}

const PARSED_BODY_MESSAGE =
  'a body parser consumed the request body before verifyWebhook; mount verifyWebhook on the webhook route ' +
  'before express.json() (or use express.raw({ type: "*/*" }) there)';

export function verifyWebhook(options: ExpressWebhookOptions): RequestHandler {
  const receiver = createReceiver(options);
  const { maxPayloadBytes } = receiver;
  const { onError } = options;
  checkCallback('onError', onError);

  // Headers such as Retry-After apply whoever writes the body.
  const respond = (
    response: WebhookResponse,
    error: WebhookVerificationError | undefined,
    req: Request,
    res: Response,
    next: NextFunction,
  ): void => {
    res.set(response.headers);
    if (error && onError) onError(error, req, res, next);
    else res.status(response.status).json(response.body);
  };

  return async (req, res, next) => {
    let payload: WebhookPayload;
    try {
      payload = await rawBodyOf(req, maxPayloadBytes);
    } catch (error) {
      if (!(error instanceof WebhookVerificationError)) {
        // A sender that hung up mid-body has nobody left to answer.
        if (req.destroyed) return;
        throw error;
      }
      return respond(errorResponse(error), error, req, res, next);
    }
    const reception = await receiver.receive(payload, req.headers);
    if (reception.action === 'respond') return respond(reception.response, reception.error, req, res, next);
    req.webhook = reception.delivery.event;
    req.webhookId = reception.delivery.id;
    if (reception.settle) settleWhenEnded(res, reception.settle);
    next();
  };
}

/** The raw body: from `express.raw()` / `express.text()` if they ran, else read from the stream. */
function rawBodyOf(req: Request, maxBytes: number): Promise<WebhookPayload> {
  const body: unknown = req.body;
  if (Buffer.isBuffer(body) || typeof body === 'string') return Promise.resolve(body);
  if (body !== undefined || req.readableDidRead) {
    return Promise.reject(new WebhookVerificationError('body_already_parsed', PARSED_BODY_MESSAGE));
  }
  return readNodeBody(req, maxBytes);
}
