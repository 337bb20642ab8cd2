/**
 * svc-webhooks/express: `verifyWebhook(options)` is Express middleware that
 * reads the raw body itself, verifies it, and hands the route `req.webhook`
 * (the typed event) and `req.webhookId` (the verified `webhook-id`). A refused
 * request is answered here with `{ error: { code, message } }` and the route
 * never runs. With `on`, it runs the handler of the event's type and answers
 * every request itself: no route is needed.
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { WebhookVerificationError } from '../src/core/errors.js';
import type { WebhookEvent } from '../src/core/event.js';
import type { EventSchemas } from '../src/receive/handler-types.js';
import { answeredOnNode, rawBodyLeftByParser, readNodeBody, statusWhenEnded } from '../src/receive/node-platform.js';
import { createPipeline, type EntryOptions } from '../src/receive/pipeline.js';

declare global {
  namespace Express {
    interface Request {
      /** The verified event; set only on routes behind `verifyWebhook`. */
      webhook: WebhookEvent;
      /** The verified `webhook-id`, the key to deduplicate on; set only behind `verifyWebhook`. */
      webhookId: string;
      /** Which secret verified it (see `KeyedSecret`); set only behind `verifyWebhook`. */
      webhookKeyId: string;
      /** The tenant (see the `tenant` option); set only behind `verifyWebhook` with one. */
      webhookTenant?: string;
    }
  }
}

export interface ExpressWebhookOptions<S extends EventSchemas = {}> extends EntryOptions<S> {
  /**
   * Which tenant's endpoint a request is for, where one receiver serves many:
   * `(req) => req.params.tenant` on a route `/webhooks/:tenant`. With it, `secret` may be a function from the tenant to its secret,
   * and the tenant scopes deduplication and reaches the route as `req.webhookTenant` and the handlers' context.
   * @default undefined (one endpoint)
   */
  readonly tenant?: (req: Request) => unknown;
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

interface ExpressRequest {
  readonly req: Request;
  readonly res: Response;
  readonly next: NextFunction;
}

export function verifyWebhook<S extends EventSchemas = {}>(options: ExpressWebhookOptions<S>): RequestHandler {
  const { onError } = options;
  const receive = createPipeline<ExpressRequest, void, S>(options, {
    entry: 'express',
    // What a parser that ran before left (see rawBodyLeftByParser), else read from the stream.
    body: ({ req }, limits) => rawBodyLeftByParser(req) ?? readNodeBody(req, req.headers['content-length'], limits),
    headers: ({ req }) => req.headers,
    userRequest: ({ req }) => req,
    send({ res }, { status, headers, body }) {
      // A failed onError may have begun an answer: end it rather than leave the request open.
      if (res.headersSent) res.end();
      else res.set(headers).status(status).json(body);
    },
    statusOf: ({ res }) => res.statusCode,
    senderGone: () => undefined,
    onError: onError && (({ req, res, next }, error, headers) => answeredOnNode(res, headers, () => onError(error, req, res, next))),
    route({ req, res, next }, { event, id, keyId, tenant }) {
      req.webhook = event;
      req.webhookId = id;
      req.webhookKeyId = keyId;
      if (tenant !== undefined) req.webhookTenant = tenant;
      const ended = statusWhenEnded(res);
      next();
      return ended;
    },
  });
  // Express 4 leaves a rejected promise unhandled (Express 5 passes it to next): pass it on for both.
  return (req, res, next) => {
    receive({ req, res, next }).catch(next);
  };
}
