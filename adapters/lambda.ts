/**
 * svc-webhooks/lambda: `verifyWebhook(options)` with `on` or `handoff`, or
 * `verifyWebhook(options, handler)`, returns an async AWS Lambda handler,
 * `(event, context) => Promise<result>`, for API Gateway REST APIs (payload
 * 1.0, `multiValueHeaders` included), HTTP APIs (payload 2.0), Function URLs
 * and Application Load Balancers. It decodes a body sent with
 * `isBase64Encoded`, reads headers in any letter case (repeated values joined
 * as Node joins them), verifies, claims the event, and runs the handler of
 * the event's type in `on`, hands the delivery to the queue, or calls
 * `handler(event, context)`, whose result is returned as it is (nothing
 * answers 204). A refused request is answered with `{ error: { code,
 * message } }` or by `onError`, a throwing handler with a fixed 500, and the
 * claim is settled by that outcome, waited for (within a bound) before the
 * function returns, since Lambda freezes whatever runs after.
 * @packageDocumentation
 */
import type { Context } from 'aws-lambda';
import type { WebhookDelivery } from '../src/core/delivery.js';
import type { WebhookEvent } from '../src/core/event.js';
import type { EventSchemas } from '../src/process/handler-types.js';
import { createHandlerEntry, type HandlerEntryOptions, type HandlerHost } from '../src/receive/handler-entry.js';
import type { SecretOrTenants } from '../src/receive/receiver.js';
import type { SingleHandlerMode, HandlersMode, HandoffMode } from '../src/receive/what-runs.js';
import { bodyOf, headersOf, LAMBDA_ANSWERS, type LambdaWebhookEvent, type LambdaWebhookResult } from './lambda-http.js';

export type { LambdaWebhookEvent, LambdaWebhookResult } from './lambda-http.js';

/** What the handler, and each handler of `on`, gets besides the webhook event: the verified delivery, the Lambda event and its context. */
export interface LambdaWebhookContext extends WebhookDelivery {
  /** The Lambda event of the HTTP request. */
  readonly request: LambdaWebhookEvent;
  /** The Lambda invocation context. */
  readonly context: Context;
}

/** Handles one verified event: a result to return, or nothing for 204. */
export type LambdaWebhookHandler = (
  event: WebhookEvent,
  context: LambdaWebhookContext,
) => LambdaWebhookResult | void | Promise<LambdaWebhookResult | void>;

/**
 * The options of the Lambda entry besides its secret and what runs. Where one receiver
 * serves many tenants, `tenants.of` reads the tenant from the request:
 * `(request) => ('pathParameters' in request ? request.pathParameters?.tenant : undefined)`;
 * the tenant reaches the delivery.
 */
export interface LambdaEntryOptions extends HandlerEntryOptions<LambdaWebhookEvent, Context, LambdaWebhookResult> {}

/** The options of `verifyWebhook` without a handler: the entry's, and `on` or `handoff`. */
export type LambdaWebhookOptions<S extends EventSchemas = {}> = LambdaEntryOptions & SecretOrTenants<LambdaWebhookEvent> & (HandlersMode<S, LambdaWebhookContext> | HandoffMode);

/** The options of `verifyWebhook` with a handler: the entry's, without `on` and `handoff`. */
export type LambdaHandlerOptions = LambdaEntryOptions & SecretOrTenants<LambdaWebhookEvent> & SingleHandlerMode;

/** The Lambda handler `verifyWebhook` returns. */
export type LambdaWebhook = (event: LambdaWebhookEvent, context: Context) => Promise<LambdaWebhookResult>;

/** What the entry knows of Lambda's HTTP sources. */
const HOST: HandlerHost<LambdaWebhookEvent, Context, LambdaWebhookResult> = {
  entry: 'lambda',
  body: bodyOf,
  headers: headersOf,
  answers: LAMBDA_ANSWERS,
};

/**
 * A Lambda handler that answers each request by itself: with the handler of its event's type in `on`, or 202 once `handoff` recorded it.
 * @example
 * ```ts
 * import { verifyWebhook } from 'svc-webhooks/lambda';
 *
 * export const handler = verifyWebhook({
 *   secret: process.env.WEBHOOK_SECRET!,
 *   on: { 'call.missed': async (missed, { id }) => queueCallback(id, missed.data.object.id) },
 * });
 * ```
 */
export function verifyWebhook<S extends EventSchemas = {}>(options: LambdaWebhookOptions<S>): LambdaWebhook;
/**
 * A Lambda handler that calls `handler` for each verified event and returns what it returns (204 for nothing).
 * @example
 * ```ts
 * import { verifyWebhook } from 'svc-webhooks/lambda';
 *
 * // Behind API Gateway (REST or HTTP API), a Function URL or an ALB.
 * export const handler = verifyWebhook({ secret: process.env.WEBHOOK_SECRET! }, async (event, { id, context }) => {
 *   if (event.type === 'call.missed') await queueCallback(id, event.data.object.id);
 * });
 * ```
 */
export function verifyWebhook(options: LambdaHandlerOptions, handler: LambdaWebhookHandler): LambdaWebhook;
/** Throws `WebhookOptionsError` for bad options, or for a handler beside `on` or `handoff`. */
export function verifyWebhook(options: LambdaWebhookOptions<EventSchemas> | LambdaHandlerOptions, handler?: LambdaWebhookHandler): LambdaWebhook {
  return createHandlerEntry(options, handler, HOST);
}
