/**
 * svc-webhooks/express: `verifyWebhook(options)` is Express middleware that
 * reads the raw body itself, verifies it, and hands the route `req.webhook`
 * (the typed event) and `req.webhookId` (the verified `webhook-id`). A refused
 * request is answered here with `{ error: { code, message } }` and the route
 * never runs. With `on`, it runs the handler of the event's type and answers
 * every request itself: no route is needed.
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { WebhookVerificationError } from '../src/core/errors.js';
import type { WebhookEvent } from '../src/core/event.js';
import type { WebhookPayload } from '../src/core/payload.js';
import { bodyRefusal, SenderGoneError, type BodyLimits } from '../src/receive/body-limits.js';
import { checkOnErrorOptions, runOnError, type OnErrorOptions } from '../src/receive/on-error.js';
import { readNodeBody } from '../src/receive/read-node-body.js';
import type { EventSchemas, HandlerOptions } from '../src/receive/event-handlers.js';
import { createHandlingReceiver } from '../src/receive/handling-receiver.js';
import { rawBodyLeftByParser } from '../src/receive/raw-body-left-by-parser.js';
import type { ReceiverOptions, WebhookResponse } from '../src/receive/receiver.js';
import { responseEnded } from '../src/receive/response-ended.js';
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

export interface ExpressWebhookOptions<S extends EventSchemas = {}> extends ReceiverOptions, OnErrorOptions, HandlerOptions<S> {
  /**
   * Answers a refused request instead of the default JSON response: it must
   * end the response (or hand over with `next(error)`) within
   * `onErrorTimeoutMs`. The route is not called either way. With `on`, the
   * handlers' refusals (`handler_failed`, `invalid_event_data`,
   * `unknown_event_type`) come here too.
   * @default answers `error.status` with `{ error: { code, message } }`
   */
  readonly onError?: (error: WebhookVerificationError, req: Request, res: Response, next: NextFunction) => void | Promise<void>;
}

export function verifyWebhook<S extends EventSchemas = {}>(options: ExpressWebhookOptions<S>): RequestHandler {
  const receiver = createHandlingReceiver(options);
  const { onError } = options;
  const onErrorTimeoutMs = checkOnErrorOptions(options);

  // Headers such as Retry-After apply whoever writes the body.
  const respond = async (
    response: WebhookResponse,
    error: WebhookVerificationError | undefined,
    req: Request,
    res: Response,
    next: NextFunction,
  ): Promise<void> => {
    res.set(response.headers);
    if (error && onError && (await runOnError(() => onError(error, req, res, next), onErrorTimeoutMs, () => responseEnded(res)))) return;
    // A failed onError may have begun an answer: end it rather than leave the request open.
    if (res.headersSent) res.end();
    else res.status(response.status).json(response.body);
  };

  const handle = async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    let payload: WebhookPayload;
    try {
      payload = await rawBodyOf(req, receiver);
    } catch (error) {
      if (error instanceof SenderGoneError) return;
      if (!(error instanceof WebhookVerificationError)) throw error;
      return respond(bodyRefusal(error), error, req, res, next);
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
async function rawBodyOf(req: Request, limits: BodyLimits): Promise<WebhookPayload> {
  return rawBodyLeftByParser(req) ?? readNodeBody(req, req.headers['content-length'], limits);
}
