/**
 * svc-webhooks/express: `verifyWebhook(options)` is Express (4 or 5)
 * middleware that reads the raw body itself, verifies it, claims its event,
 * and hands the route `req.webhook`, the verified delivery. A refused
 * request is answered here with `{ error: { code, message } }` and the route
 * never runs. With `on` or `handoff`, it answers every request itself: no
 * route is needed.
 * @packageDocumentation
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { WebhookDelivery } from '../src/core/delivery.js';
import type { WebhookError } from '../src/core/errors.js';
import type { EventSchemas } from '../src/process/handler-types.js';
import { answeredOnNode, rawBodyLeftByParser, readNodeBody, statusWhenEnded } from '../src/receive/node-platform.js';
import { createPipeline, type EntryOptions, type PipelineOptions } from '../src/receive/pipeline.js';
import { entryOptions, type SecretOrTenants } from '../src/receive/receiver.js';
import type { MiddlewareMode } from '../src/receive/what-runs.js';
import { sendOnExpress } from './answers.js';

declare global {
  namespace Express {
    interface Request {
      /** The verified delivery: its event, id, timestamp, keyId, tenant, dedupKey and stale. Set only on routes behind `verifyWebhook`. */
      webhook: WebhookDelivery;
    }
  }
}

/**
 * The options of the Express entry besides its secret and what runs. Where one
 * receiver serves many tenants, `tenants.of` reads the tenant from the
 * request: `(req) => req.params.tenant` on a route `/webhooks/:tenant`; the
 * tenant reaches the delivery as `req.webhook.tenant`.
 */
export interface ExpressEntryOptions extends EntryOptions {
  /**
   * Answers a refused request instead of the default JSON response: it must
   * end the response (or hand over with `next(error)`) within
   * `onErrorTimeoutMs`. The route is not called either way. With `on`, the
   * handlers' refusals (`handler_failed`, `invalid_event_data`,
   * `unknown_event_type`) come here too.
   * @default answers `error.status` with `{ error: { code, message } }`
   */
  readonly onError?: (error: WebhookError, req: Request, res: Response, next: NextFunction) => void | Promise<void>;
}

/** The options of `verifyWebhook`: the entry's, and what runs (`on`, `handoff`, or neither for the route). */
export type ExpressWebhookOptions<S extends EventSchemas = {}> = ExpressEntryOptions & SecretOrTenants<Request> & MiddlewareMode<S>;

interface ExpressRequest {
  readonly req: Request;
  readonly res: Response;
  readonly next: NextFunction;
}

/**
 * Express middleware that verifies each request on its raw body (mount it
 * before `express.json()`, or keep the raw bytes in `req.rawBody`) and
 * answers refusals itself. Without `on` or `handoff`, the route after it runs
 * under the claim with `req.webhook` set, and settles it by the status it
 * answers. Throws `WebhookOptionsError` for bad options.
 * @example
 * ```ts
 * import express from 'express';
 * import { verifyWebhook } from 'svc-webhooks/express';
 *
 * const app = express();
 * app.post('/webhooks', verifyWebhook({ secret: process.env.WEBHOOK_SECRET! }), (req, res) => {
 *   queue.add(req.webhook.event); // the verified delivery: its event, id, keyId, dedupKey
 *   res.status(204).end();
 * });
 * ```
 */
export function verifyWebhook<S extends EventSchemas = {}>(options: ExpressWebhookOptions<S>): RequestHandler {
  const { onError } = entryOptions(options);
  const receive = createPipeline<ExpressRequest, void>(
    options as PipelineOptions,
    {
      entry: 'express',
      // What a parser that ran before left (see rawBodyLeftByParser), else read from the stream.
      body: ({ req }, limits) => rawBodyLeftByParser(req) ?? readNodeBody(req, req.headers['content-length'], limits),
      headers: ({ req }) => req.headers,
      userRequest: ({ req }) => req,
      send: ({ res }, response) => sendOnExpress(res, response),
      statusOf: ({ res }) => res.statusCode,
      senderGone: () => undefined,
      onError: onError && (({ req, res, next }, error, headers) => answeredOnNode(res, headers, () => onError(error, req, res, next))),
    },
    {
      route({ req, res, next }, delivery) {
        req.webhook = delivery;
        const ended = statusWhenEnded(res);
        next();
        return ended;
      },
    },
  );
  // Express 4 leaves a rejected promise unhandled (Express 5 passes it to next): pass it on for both.
  return (req, res, next) => {
    receive({ req, res, next }).catch(next);
  };
}
