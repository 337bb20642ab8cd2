/**
 * svc-webhooks/fetch: `verifyWebhook(options)` with `on` or `handoff`, or
 * `verifyWebhook(options, handler)`, returns a Fetch handler,
 * `(request) => Promise<Response>`, for every host that hands over a
 * `Request` and wants a `Response`: Next.js route handlers, Remix and React
 * Router actions, SvelteKit, Nuxt and h3, Astro, Bun.serve, Deno.serve,
 * Cloudflare Workers, Elysia. It reads the raw body up to `maxPayloadBytes`,
 * verifies it, claims the event, and runs the handler of the event's type in
 * `on`, hands the delivery to the queue, or calls `handler(event, context)`,
 * whose Response is sent as it is (nothing answers 204). A refused request
 * is answered with `{ error: { code, message } }` or by `onError`, a
 * throwing handler with a fixed 500, and the claim is settled by that
 * outcome: a 2xx completes it, anything else releases it.
 * @packageDocumentation
 */
import type { WebhookDelivery } from '../src/core/delivery.js';
import type { WebhookEvent } from '../src/core/event.js';
import type { EventSchemas } from '../src/process/handler-types.js';
import { createHandlerEntry, type HandlerEntryOptions, type HandlerHost } from '../src/receive/handler-entry.js';
import type { SecretOrTenants } from '../src/receive/receiver.js';
import { readRequestBody, WEB_ANSWERS } from '../src/receive/web-platform.js';
import type { SingleHandlerMode, HandlersMode, HandoffMode } from '../src/receive/what-runs.js';

/** What the handler, and each handler of `on`, gets besides the event: the verified delivery, the request, and what the host passed after it. */
export interface FetchWebhookContext extends WebhookDelivery {
  /** The request, for its URL and headers; its body is already read. */
  readonly request: Request;
  /** What the host passed after the request: a Worker's `env` and `ctx`, a Next.js route's `{ params }`, Bun's server. */
  readonly context: readonly unknown[];
}

/** Handles one verified event: a Response to send, or nothing for 204. */
export type FetchWebhookHandler = (event: WebhookEvent, context: FetchWebhookContext) => Response | void | Promise<Response | void>;

/**
 * The options of the Fetch entry besides its secret and what runs. Where one receiver
 * serves many tenants, `tenants.of` reads the tenant from the request:
 * `(request) => new URL(request.url).pathname.split('/')[2]` for
 * `/webhooks/<tenant>`; the tenant reaches the delivery. `onError` gets the
 * request and what the host passed after it.
 */
export interface FetchEntryOptions extends HandlerEntryOptions<Request, readonly unknown[], Response> {}

/** The options of `verifyWebhook` without a handler: the entry's, and `on` or `handoff`. */
export type FetchWebhookOptions<S extends EventSchemas = {}> = FetchEntryOptions & SecretOrTenants<Request> & (HandlersMode<S, FetchWebhookContext> | HandoffMode);

/** The options of `verifyWebhook` with a handler: the entry's, without `on` and `handoff`. */
export type FetchHandlerOptions = FetchEntryOptions & SecretOrTenants<Request> & SingleHandlerMode;

/**
 * The Fetch handler. Hosts may pass more after the request: an argument with
 * a `waitUntil` method (a Worker's third, `ctx`) takes the settling of the
 * dedup claim, so that a store slower than the answer is not cut off.
 */
export type FetchWebhook = (request: Request, ...platform: unknown[]) => Promise<Response>;

const BODY_USED_MESSAGE =
  'the request body was read before verifyWebhook; hand it the request unread (in Elysia, a route that never reads `body`)';

/** What the entry knows of a Fetch host. */
const HOST: HandlerHost<Request, readonly unknown[], Response> = {
  entry: 'fetch',
  body: (request, limits) => readRequestBody(request, limits, BODY_USED_MESSAGE),
  headers: (request) => request.headers,
  answers: WEB_ANSWERS,
  keepAlive: (_request, platform, work) => waitUntilOf(platform)?.(work),
};

/**
 * A Fetch handler that answers each request by itself: with the handler of its event's type in `on`, or 202 once `handoff` recorded it.
 * @example
 * ```ts
 * import { verifyWebhook } from 'svc-webhooks/fetch';
 *
 * export const POST = verifyWebhook({
 *   secret: process.env.WEBHOOK_SECRET!,
 *   on: { 'call.missed': async (missed, { id }) => queueCallback(id, missed.data.object.id) },
 * });
 * ```
 */
export function verifyWebhook<S extends EventSchemas = {}>(options: FetchWebhookOptions<S>): FetchWebhook;
/**
 * A Fetch handler that calls `handler` for each verified event and sends what it returns (204 for nothing).
 * @example
 * ```ts
 * import { verifyWebhook } from 'svc-webhooks/fetch';
 *
 * // A Next.js route handler, Bun.serve's fetch, a Worker's fetch: each request is a Fetch Request.
 * export const POST = verifyWebhook({ secret: process.env.WEBHOOK_SECRET! }, async (event, { id, request }) => {
 *   if (event.type === 'call.missed') await queueCallback(id, event.data.object.id);
 * });
 * ```
 */
export function verifyWebhook(options: FetchHandlerOptions, handler: FetchWebhookHandler): FetchWebhook;
/** Throws `WebhookOptionsError` for bad options, or for a handler beside `on` or `handoff`. */
export function verifyWebhook(options: FetchWebhookOptions<EventSchemas> | FetchHandlerOptions, handler?: FetchWebhookHandler): FetchWebhook {
  const receive = createHandlerEntry(options, handler, HOST);
  return (request, ...platform) => receive(request, platform);
}

/** The `waitUntil` of the first extra argument that has one, bound to it. */
function waitUntilOf(platform: readonly unknown[]): ((work: Promise<void>) => void) | undefined {
  for (const context of platform) {
    const candidate = context as { waitUntil?: unknown } | null;
    if (typeof candidate === 'object' && candidate !== null && typeof candidate.waitUntil === 'function') {
      const waitUntil = candidate.waitUntil as (promise: Promise<unknown>) => void;
      // Called as a method: a Worker's ctx.waitUntil throws when detached.
      return (work) => waitUntil.call(candidate, work);
    }
  }
  return undefined;
}
