/**
 * svc-webhooks/azure: `verifyWebhook(options)` with `on` or `handoff`, or
 * `verifyWebhook(options, handler)`, returns an HTTP handler of Azure
 * Functions' v4 programming model, `(request, context) =>
 * Promise<HttpResponseInit>`, to register with `app.http()`. It reads the
 * raw body once, within `maxPayloadBytes`, verifies it, claims the event,
 * and runs the handler of the event's type in `on`, hands the delivery to
 * the queue, or calls `handler(event, context)`, whose answer is returned as
 * it is (nothing answers 204). A refused request is answered with
 * `{ error: { code, message } }` or by `onError`, a throwing handler with a
 * fixed 500, and the claim is settled by that outcome, waited for (within a
 * bound) before the function returns: the invocation ends with its answer.
 * @packageDocumentation
 */
import type { HttpRequest, HttpResponseInit, InvocationContext } from '@azure/functions';
import type { WebhookDelivery } from '../src/core/delivery.js';
import type { WebhookEvent } from '../src/core/event.js';
import type { EventSchemas } from '../src/process/handler-types.js';
import { createHandlerEntry, type HandlerEntryOptions, type HandlerHost } from '../src/receive/handler-entry.js';
import type { HostAnswers } from '../src/receive/platform.js';
import type { SecretOrTenants } from '../src/receive/receiver.js';
import { readRequestBody } from '../src/receive/web-platform.js';
import type { SingleHandlerMode, HandlersMode, HandoffMode } from '../src/receive/what-runs.js';

/** What the handler, and each handler of `on`, gets besides the event: the verified delivery, the request and the invocation's context. */
export interface AzureWebhookContext extends WebhookDelivery {
  /** The request, for its URL, params and headers; its body is already read. */
  readonly request: HttpRequest;
  /** The invocation's context (`invocationId`, `log`, …). */
  readonly context: InvocationContext;
}

/** Handles one verified event: an answer to return, or nothing for 204. Its `status` settles the claim; none is 200, as Azure answers it. */
export type AzureWebhookHandler = (event: WebhookEvent, context: AzureWebhookContext) => HttpResponseInit | void | Promise<HttpResponseInit | void>;

/**
 * The options of the Azure entry besides its secret and what runs. Where one receiver
 * serves many tenants, `tenants.of` reads the tenant from the request:
 * `(request) => request.params.tenant` for a route `webhooks/{tenant}`; the
 * tenant reaches the delivery.
 */
export interface AzureEntryOptions extends HandlerEntryOptions<HttpRequest, InvocationContext, HttpResponseInit> {}

/** The options of `verifyWebhook` without a handler: the entry's, and `on` or `handoff`. */
export type AzureWebhookOptions<S extends EventSchemas = {}> = AzureEntryOptions & SecretOrTenants<HttpRequest> & (HandlersMode<S, AzureWebhookContext> | HandoffMode);

/** The options of `verifyWebhook` with a handler: the entry's, without `on` and `handoff`. */
export type AzureHandlerOptions = AzureEntryOptions & SecretOrTenants<HttpRequest> & SingleHandlerMode;

/** The HTTP handler `verifyWebhook` returns, for `app.http(name, { methods: ['POST'], handler })`. */
export type AzureWebhook = (request: HttpRequest, context: InvocationContext) => Promise<HttpResponseInit>;

const BODY_USED_MESSAGE = 'the request body was read before verifyWebhook; hand it the request unread';

/** Azure's answers: an object whose `status`, if any, is an HTTP status; none is 200, as Azure answers it. */
const AZURE_ANSWERS: HostAnswers<HttpRequest, HttpResponseInit> = {
  isAnswer: (value): value is HttpResponseInit => {
    const answer = value as HttpResponseInit | null;
    return typeof answer === 'object' && answer !== null && (answer.status === undefined || Number.isInteger(answer.status));
  },
  described: '{ status, ... }',
  statusOf: (answer) => answer.status ?? 200,
  make: (_request, { status, headers, body }) =>
    body === undefined ? { status, headers: { ...headers } } : { status, headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) },
  withMissingHeaders(answer, headers) {
    // Headers reads the answer's own names in any letter case, whatever form they came in.
    const own = new Headers(answer.headers as ConstructorParameters<typeof Headers>[0]);
    const missing = Object.entries(headers).filter(([name]) => !own.has(name));
    if (missing.length === 0) return answer;
    for (const [name, value] of missing) own.set(name, value);
    return { ...answer, headers: Object.fromEntries(own) };
  },
};

/** What the entry knows of the Functions host. */
const HOST: HandlerHost<HttpRequest, InvocationContext, HttpResponseInit> = {
  entry: 'azure',
  // Azure's HttpRequest reads as a Fetch Request does: its body stream, bodyUsed and arrayBuffer().
  body: (request, limits) => readRequestBody(request as unknown as Request, limits, BODY_USED_MESSAGE),
  headers: (request) => request.headers,
  answers: AZURE_ANSWERS,
};

/**
 * An Azure HTTP handler that answers each request by itself: with the handler of its event's type in `on`, or 202 once `handoff` recorded it.
 * @example
 * ```ts
 * import { app } from '@azure/functions';
 * import { verifyWebhook } from 'svc-webhooks/azure';
 *
 * app.http('webhooks', {
 *   methods: ['POST'],
 *   handler: verifyWebhook({
 *     secret: process.env.WEBHOOK_SECRET!,
 *     on: { 'call.missed': async (missed, { id }) => queueCallback(id, missed.data.object.id) },
 *   }),
 * });
 * ```
 */
export function verifyWebhook<S extends EventSchemas = {}>(options: AzureWebhookOptions<S>): AzureWebhook;
/**
 * An Azure HTTP handler that calls `handler` for each verified event and returns what it returns (204 for nothing).
 * @example
 * ```ts
 * import { app } from '@azure/functions';
 * import { verifyWebhook } from 'svc-webhooks/azure';
 *
 * app.http('webhooks', {
 *   methods: ['POST'],
 *   handler: verifyWebhook({ secret: process.env.WEBHOOK_SECRET! }, async (event, { id, context }) => {
 *     if (event.type === 'call.missed') await queueCallback(id, event.data.object.id);
 *   }),
 * });
 * ```
 */
export function verifyWebhook(options: AzureHandlerOptions, handler: AzureWebhookHandler): AzureWebhook;
/** Throws `WebhookOptionsError` for bad options, or for a handler beside `on` or `handoff`. */
export function verifyWebhook(options: AzureWebhookOptions<EventSchemas> | AzureHandlerOptions, handler?: AzureWebhookHandler): AzureWebhook {
  return createHandlerEntry(options, handler, HOST);
}
