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
import { WebhookVerificationError } from '../src/core/errors.js';
import type { WebhookEvent } from '../src/core/event.js';
import type { WaitUntil } from '../src/receive/answer-under-claim.js';
import { createAnsweringEntry, type AnsweringOptions, type WithoutHandlerOptions } from '../src/receive/answering-entry.js';
import type { BodyLimits } from '../src/receive/body-limits.js';
import type { EventHandlers, EventSchemas } from '../src/receive/event-handlers.js';
import { readWebBody } from '../src/receive/read-web-body.js';
import { isResponse, withMissingHeaders } from '../src/receive/web-response.js';

/** What the handler gets besides the event. */
export interface FetchWebhookContext {
  /** The verified `webhook-id`, the key to deduplicate on. */
  readonly id: string;
  /** The verified `webhook-timestamp`, in seconds since the Unix epoch. */
  readonly timestamp: number;
  /** The request, for its URL and headers; its body is already read. */
  readonly request: Request;
}

/** Handles one verified event: a Response to send, or nothing for 204. */
export type FetchWebhookHandler = (event: WebhookEvent, context: FetchWebhookContext) => Response | void | Promise<Response | void>;

export interface FetchWebhookOptions<S extends EventSchemas = {}> extends AnsweringOptions<S> {
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

const responses = { isAnswer: isResponse, described: 'a Response', statusOf: (response: Response) => response.status };

/** Answers each request by itself with the handler of its event's type in `on`. */
export function verifyWebhook<S extends EventSchemas = {}>(options: FetchWebhookOptions<S> & { readonly on: EventHandlers<S> }): FetchWebhook;
/** Calls `handler` for each verified event and sends what it returns. */
export function verifyWebhook(options: FetchWebhookOptions & WithoutHandlerOptions, handler: FetchWebhookHandler): FetchWebhook;
export function verifyWebhook(options: FetchWebhookOptions<EventSchemas>, handler?: FetchWebhookHandler): FetchWebhook {
  const entry = createAnsweringEntry<Response, FetchWebhookContext>(options, handler, responses);
  const { onError } = options;

  return async (request, ...platform) => {
    const result = await entry.answer({
      body: rawBody(request, entry),
      headers: request.headers,
      contextOf: ({ id, timestamp }) => ({ id, timestamp, request }),
      onError: onError && ((error) => onError(error, request)),
      withHeaders: withMissingHeaders,
      waitUntil: waitUntilOf(platform),
    });
    if ('answer' in result) return result.answer;
    const { status, headers, body } = result.response;
    if (body === undefined) return new Response(null, { status, headers });
    return new Response(JSON.stringify(body), { status, headers: { ...headers, 'content-type': 'application/json' } });
  };
}

/** The raw body, refused past `maxBytes` without ever reading a body of unknown length whole. */
async function rawBody(request: Request, limits: BodyLimits): Promise<ArrayBuffer> {
  if (request.bodyUsed) throw new WebhookVerificationError('body_already_parsed', BODY_USED_MESSAGE);
  return readWebBody(request.body, request.headers.get('content-length') ?? undefined, limits);
}

/** The `waitUntil` of the first extra argument that has one, bound to it. */
function waitUntilOf(platform: readonly unknown[]): WaitUntil | undefined {
  for (const context of platform) {
    const candidate = context as { waitUntil?: unknown } | null;
    if (typeof candidate === 'object' && candidate !== null && typeof candidate.waitUntil === 'function') {
      const waitUntil = candidate.waitUntil as (promise: Promise<unknown>) => void;
      // Called as a method: a Worker's ctx.waitUntil throws when detached.
      return (settling) => waitUntil.call(candidate, settling);
    }
  }
  return undefined;
}
