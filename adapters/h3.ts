/**
 * svc-webhooks/h3: `verifyWebhook(options)` with `on` or `handoff`, or
 * `verifyWebhook(options, handler)`, returns an h3 event handler, for h3 1
 * (Nitro 2, Nuxt 3 and 4 server routes) and h3 2. It reads the raw body
 * once, within `maxPayloadBytes`: h3 2's Web `event.req`, h3 1's Node request
 * (or the bytes h3 kept from a `readRawBody` before it), or the Web request
 * of h3 1 on a Web host. It verifies the body, claims the event, and runs the
 * handler of the event's type in `on`, hands the delivery to the queue, or
 * calls `handler(event, context)` with `event.context.webhook` set, whose
 * Response is sent as it is (nothing answers 204). A refused request is
 * answered with `{ error: { code, message } }` or by `onError`, a throwing
 * handler with a fixed 500, and the claim is settled by that outcome.
 * @packageDocumentation
 */
import type { H3Event, H3EventContext } from 'h3';
import type { WebhookDelivery } from '../src/core/delivery.js';
import type { WebhookEvent } from '../src/core/event.js';
import type { WebhookHeaders } from '../src/core/headers.js';
import type { WebhookPayload } from '../src/core/payload.js';
import type { EventSchemas } from '../src/process/handler-types.js';
import type { BodyLimits } from '../src/receive/body-limits.js';
import { rawBodyLeftByParser, readNodeBody, type ParsedNodeRequest } from '../src/receive/node-platform.js';
import { createHandlerEntry, type HandlerEntryOptions, type HandlerHost } from '../src/receive/handler-entry.js';
import type { SecretOrTenants } from '../src/receive/receiver.js';
import { readRequestBody, WEB_ANSWERS } from '../src/receive/web-platform.js';
import type { SingleHandlerMode, HandlersMode, HandoffMode } from '../src/receive/what-runs.js';

declare module 'h3' {
  interface H3EventContext {
    /** The verified delivery: its event, id, timestamp, keyId, tenant, dedupKey and stale. Set only while the handler given to `verifyWebhook` runs. */
    webhook?: WebhookDelivery;
  }
}

/** What the handler, and each handler of `on`, gets besides the event: the verified delivery, the h3 event and its context. */
export interface H3WebhookContext extends WebhookDelivery {
  /** The host's request: the h3 event, for its URL and params; its body is already read. */
  readonly request: H3Event;
  /** The h3 event's `context`, where `webhook` is this delivery. */
  readonly context: H3EventContext;
}

/** Handles one verified event: a Response to send, or nothing for 204. */
export type H3WebhookHandler = (event: WebhookEvent, context: H3WebhookContext) => Response | void | Promise<Response | void>;

/**
 * The options of the h3 entry besides its secret and what runs. Where one receiver
 * serves many tenants, `tenants.of` reads the tenant from the request:
 * `(event) => getRouterParam(event, 'tenant')` on a route `/webhooks/:tenant`
 * (Nitro: `routes/webhooks/[tenant].post.ts`); the tenant reaches the delivery.
 */
export interface H3EntryOptions extends HandlerEntryOptions<H3Event, H3EventContext, Response> {}

/** The options of `verifyWebhook` without a handler: the entry's, and `on` or `handoff`. */
export type H3WebhookOptions<S extends EventSchemas = {}> = H3EntryOptions & SecretOrTenants<H3Event> & (HandlersMode<S, H3WebhookContext> | HandoffMode);

/** The options of `verifyWebhook` with a handler: the entry's, without `on` and `handoff`. */
export type H3HandlerOptions = H3EntryOptions & SecretOrTenants<H3Event> & SingleHandlerMode;

/** The event handler `verifyWebhook` returns: for `app.post()`, a router, or as a Nitro route's default export (`defineEventHandler(verifyWebhook(…))`). */
export type H3Webhook = (event: H3Event) => Promise<Response>;

/** What the entry reads of an event of either major: h3 2's Web `req`; h3 1's Node `node.req`, or its `web.request` on a Web host. */
interface EventOfEitherMajor {
  readonly req: Request | ParsedNodeRequest;
  readonly web?: { readonly request?: Request };
  readonly node?: { readonly req: ParsedNodeRequest & { readonly [RAW_BODY]?: PromiseLike<Uint8Array> } };
  readonly context: Record<string, unknown>;
  readonly waitUntil?: (work: Promise<unknown>) => void;
}

/** Where h3 1's `readRawBody` keeps the bytes it read. */
const RAW_BODY = Symbol.for('h3RawBody');

const BODY_USED_MESSAGE = 'the request body was read before verifyWebhook, outside h3 (event.req); read it with readRawBody(), readBody() or event.req.text() instead';

/** What the entry knows of h3, of either major. */
const HOST: HandlerHost<H3Event, H3EventContext, Response> = {
  entry: 'h3',
  body: (event, limits) => bodyOf(event as unknown as EventOfEitherMajor, limits),
  headers: (event) => headersOf(event as unknown as EventOfEitherMajor),
  answers: WEB_ANSWERS,
  // h3 2's own, or the one Nitro adds to h3 1's events.
  keepAlive: (event, _context, work) => (event as unknown as EventOfEitherMajor).waitUntil?.(work),
  delivered: (event, delivery) => {
    event.context.webhook = delivery;
  },
};

/**
 * An h3 event handler that answers each request by itself: with the handler of its event's type in `on`, or 202 once `handoff` recorded it.
 * @example
 * ```ts
 * // server/routes/webhooks.post.ts in Nitro or Nuxt
 * import { verifyWebhook } from 'svc-webhooks/h3';
 *
 * export default verifyWebhook({
 *   secret: process.env.WEBHOOK_SECRET!,
 *   on: { 'call.missed': async (missed, { id }) => queueCallback(id, missed.data.object.id) },
 * });
 * ```
 */
export function verifyWebhook<S extends EventSchemas = {}>(options: H3WebhookOptions<S>): H3Webhook;
/**
 * An h3 event handler that calls `handler` for each verified event and sends what it returns (204 for nothing).
 * @example
 * ```ts
 * // server/routes/webhooks.post.ts in Nitro or Nuxt
 * import { verifyWebhook } from 'svc-webhooks/h3';
 *
 * export default verifyWebhook({ secret: process.env.WEBHOOK_SECRET! }, async (event, { id, request }) => {
 *   if (event.type === 'call.missed') await queueCallback(id, event.data.object.id);
 * });
 * ```
 */
export function verifyWebhook(options: H3HandlerOptions, handler: H3WebhookHandler): H3Webhook;
/** Throws `WebhookOptionsError` for bad options, or for a handler beside `on` or `handoff`. */
export function verifyWebhook(options: H3WebhookOptions<EventSchemas> | H3HandlerOptions, handler?: H3WebhookHandler): H3Webhook {
  const receive = createHandlerEntry(options, handler, HOST);
  return (event) => receive(event, event.context);
}

/** The event's Web request: h3 2's, or h3 1's on a Web host; none for h3 1 on Node. */
function requestOf({ req, web }: EventOfEitherMajor): Request | undefined {
  // h3 1's `req` is a deprecated alias of its Node request, whose headers are a record.
  if (typeof req.headers.get === 'function') return req as Request;
  return web?.request;
}

/** The request's headers: the Web request's, or h3 1's Node request's on Node. */
function headersOf(event: EventOfEitherMajor): WebhookHeaders {
  return requestOf(event)?.headers ?? event.node!.req.headers;
}

/**
 * The raw body: from the Web request, or from h3 1's Node request, where
 * `readRawBody` or a Node middleware may have read it already (verifying
 * holds those bytes to the limit too).
 */
function bodyOf(event: EventOfEitherMajor, limits: BodyLimits): WebhookPayload | PromiseLike<WebhookPayload> {
  const request = requestOf(event);
  if (request !== undefined) return readRequestBody(request, limits, BODY_USED_MESSAGE);
  const node = event.node!.req;
  return node[RAW_BODY] ?? rawBodyLeftByParser(node) ?? readNodeBody(node, node.headers['content-length'], limits);
}
