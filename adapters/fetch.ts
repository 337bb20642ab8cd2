/**
 * svc-webhooks/fetch: `verifyWebhook(options)` with `on`, or
 * `verifyWebhook(options, handler)`, returns a Fetch handler,
 * `(request) => Promise<Response>`, for every host that hands over a
 * `Request` and wants a `Response`: Next.js route handlers, Remix and React
 * Router actions, SvelteKit, Nuxt and h3, Astro, Bun.serve, Deno.serve,
 * Cloudflare Workers, Elysia. It reads the raw body up to `maxPayloadBytes`,
 * verifies it, claims the event, and runs the handler of the event's type in
 * `on`, or calls `handler(event, { id, timestamp, request })`, whose Response
 * is sent as it is (nothing answers 204). A refused request is answered with
 * `{ error: { code, message } }` or by `onError`, a throwing handler with a
 * fixed 500, and the claim is settled by that outcome: a 2xx completes it,
 * anything else releases it.
 */
import type { WebhookVerificationError } from '../src/core/errors.js';
import type { WebhookEvent } from '../src/core/event.js';
import type { EventHandlers, EventSchemas, WithoutHandlerOptions } from '../src/receive/handler-types.js';
import type { Handoff } from '../src/receive/handoff.js';
import { createPipeline, type EntryOptions, type SingleHandler } from '../src/receive/pipeline.js';
import { isResponse, onErrorResponse, readRequestBody, webResponse } from '../src/receive/web-platform.js';

/** What the handler gets besides the event. */
export interface FetchWebhookContext {
  /** The verified `webhook-id`, the key to deduplicate on. */
  readonly id: string;
  /** The verified `webhook-timestamp`, in seconds since the Unix epoch. */
  readonly timestamp: number;
  /** Which secret verified it (see `KeyedSecret`). */
  readonly keyId: string;
  /** The tenant (see the `tenant` option); absent without one. */
  readonly tenant?: string;
  /** The request, for its URL and headers; its body is already read. */
  readonly request: Request;
}

/** Handles one verified event: a Response to send, or nothing for 204. */
export type FetchWebhookHandler = (event: WebhookEvent, context: FetchWebhookContext) => Response | void | Promise<Response | void>;

export interface FetchWebhookOptions<S extends EventSchemas = {}> extends EntryOptions<S> {
  /**
   * Which tenant's endpoint a request is for, where one receiver serves many:
   * `(request) => new URL(request.url).pathname.split('/')[2]` for `/webhooks/<tenant>`. With it, `secret` may be a function from the tenant to its secret,
   * and the tenant scopes deduplication and reaches the handlers' context.
   * @default undefined (one endpoint)
   */
  readonly tenant?: (request: Request) => unknown;
  /**
   * Answers a refused request instead of the default JSON response, within
   * `onErrorTimeoutMs`. No handler runs for it. The handlers' refusals
   * (`handler_failed`, `invalid_event_data`, `unknown_event_type`) come here too.
   * @default answers `error.status` with `{ error: { code, message } }`
   */
  readonly onError?: (error: WebhookVerificationError, request: Request) => Response | Promise<Response>;
}

/**
 * The Fetch handler. Hosts may pass more after the request: an argument with
 * a `waitUntil` method (a Worker's third, `ctx`) takes the settling of the
 * dedup claim, so that a store slower than the answer is not cut off.
 */
export type FetchWebhook = (request: Request, ...platform: unknown[]) => Promise<Response>;

const BODY_USED_MESSAGE =
  'the request body was read before verifyWebhook; hand it the request unread (in Elysia, a route that never reads `body`)';

/** One request, with what the host passed after it. */
interface FetchRequest {
  readonly request: Request;
  readonly platform: readonly unknown[];
}

/** Answers each request by itself with the handler of its event's type in `on`. */
export function verifyWebhook<S extends EventSchemas = {}>(options: FetchWebhookOptions<S> & { readonly on: EventHandlers<S> }): FetchWebhook;
/** Calls `handler` for each verified event and sends what it returns. */
export function verifyWebhook(options: FetchWebhookOptions & WithoutHandlerOptions, handler: FetchWebhookHandler): FetchWebhook;
/** Hands each verified event to a durable queue (`handoff`) and answers 202 once it is recorded. */
export function verifyWebhook(options: FetchWebhookOptions & WithoutHandlerOptions & { readonly handoff: Handoff }): FetchWebhook;
export function verifyWebhook(options: FetchWebhookOptions<EventSchemas>, handler?: FetchWebhookHandler): FetchWebhook {
  const { onError } = options;
  const receive = createPipeline<FetchRequest, Response, EventSchemas>(
    options,
    {
      entry: 'fetch',
      body: ({ request }, limits) => readRequestBody(request, limits, BODY_USED_MESSAGE),
      headers: ({ request }) => request.headers,
      userRequest: ({ request }) => request,
      send: (_request, { status, headers, body }) => webResponse(status, headers, body),
      statusOf: (_request, response) => response!.status,
      // Nobody reads this answer.
      senderGone: () => new Response(null, { status: 400 }),
      onError: onError && (async ({ request }, error, headers) => onErrorResponse(await onError(error, request), headers)),
      keepAlive: ({ platform }, work) => waitUntilOf(platform)?.(work),
      single: {
        shape: { isAnswer: isResponse, described: 'a Response', statusOf: (response: Response) => response.status },
        context: ({ request }, { id, timestamp, keyId, tenant }): FetchWebhookContext =>
          tenant === undefined ? { id, timestamp, keyId, request } : { id, timestamp, keyId, tenant, request },
      },
    },
    handler as SingleHandler | undefined,
  );
  // Never undefined: there is no route.
  return (request, ...platform) => receive({ request, platform }) as Promise<Response>;
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
