/**
 * svc-webhooks/express: `verifyWebhook(options)` is Express middleware that
 * reads the raw body itself, verifies it, and hands the route `req.webhook`
 * (the typed event) and `req.webhookId` (the verified `webhook-id`). A refused
 * request is answered here with `{ error: { code, message } }` and the route
 * never runs.
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { WebhookVerificationError } from '../src/core/errors.js';
import type { WebhookEvent } from '../src/core/event.js';
import type { WebhookPayload } from '../src/core/payload.js';
import { readNodeBody } from '../src/receive/read-node-body.js';
import { rawBodyLeftByParser } from '../src/receive/raw-body-left-by-parser.js';
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

  const handle = async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    let payload: WebhookPayload;
    try {
      payload = await rawBodyOf(req, maxPayloadBytes);
    } catch (error) {
      if (!(error instanceof WebhookVerificationError)) {
        // A sender that hung up mid-body has nobody left to answer.
        if (req.destroyed) return;
        throw error;
      }
      // The rest of the body is left unread: close the connection rather than drain it.
      if (error.code === 'payload_too_large') res.setHeader('connection', 'close');
      return respond(errorResponse(error), error, req, res, next);
    }
    const reception = await receiver.receive(payload, req.headers);
    if (reception.action === 'respond') return respond(reception.response, reception.error, req, res, next);
    req.webhook = reception.delivery.event;
    req.webhookId = reception.delivery.id;
    if (reception.settle) settleWhenEnded(res, reception.settle);
    next();
  };
  // Express 4 leaves a rejected promise unhandled (Express 5 passes it to next): pass it on for both.
  return (req, res, next) => {
    handle(req, res, next).catch(next);
  };
}

/** The raw body: what a parser that ran before left (see rawBodyLeftByParser), else read from the stream. */
async function rawBodyOf(req: Request, maxBytes: number): Promise<WebhookPayload> {
  return rawBodyLeftByParser(req) ?? readNodeBody(req, maxBytes);
}
