/**
 * svc-webhooks/fetch: `verifyWebhook(options, handler)` returns a Fetch
 * handler, `(request) => Promise<Response>`, for every host that hands over a
 * `Request` and wants a `Response`: Next.js route handlers, Remix and React
 * Router actions, SvelteKit, Nuxt and h3, Astro, Bun.serve, Deno.serve,
 * Cloudflare Workers, Elysia. It reads the raw body up to `maxPayloadBytes`,
 * verifies it, claims the event when `dedup` is set, and calls
 * `handler(event, { id, timestamp, request })`. The handler's Response is sent
 * as it is; returning nothing answers 204. A refused request is answered with
 * `{ error: { code, message } }`, a throwing handler with a fixed 500, and the
 * claim is settled by that outcome: a 2xx completes it, anything else releases it.
 */
import { WebhookVerificationError } from '../src/core/errors.js';
import type { WebhookEvent } from '../src/core/event.js';
import { checkCallback } from '../src/core/option-checks.js';
import type { BodyLimits } from '../src/receive/body-limits.js';
import { createDeliveryHandling, type DeliveryOptions, type Refusal } from '../src/receive/handle-delivery.js';
import { readWebBody } from '../src/receive/read-web-body.js';

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

export interface FetchWebhookOptions extends DeliveryOptions {
  /**
   * Answers a refused request instead of the default JSON response. The
   * handler is not called either way.
   * @default answers `error.status` with `{ error: { code, message } }`
   */
  readonly onError?: (error: WebhookVerificationError, request: Request) => Response | Promise<Response>;
}

/**
 * The Fetch handler. Hosts may pass more after the request: an argument with
 * a `waitUntil` method (a Worker's third, `ctx`) takes the settling of the
 * dedup claim, so the Response goes out at once; without one the Response
 * waits for the settling.
 */
export type FetchWebhook = (request: Request, ...platform: unknown[]) => Promise<Response>;

const BODY_USED_MESSAGE =
  'the request body was read before verifyWebhook; hand it the request unread (in Elysia, a route that never reads `body`)';

export function verifyWebhook(options: FetchWebhookOptions, handler: FetchWebhookHandler): FetchWebhook {
  const handling = createDeliveryHandling(options);
  const { onError } = options;
  checkCallback('onError', onError);
  if (typeof handler !== 'function') throw new TypeError('svc-webhooks: verifyWebhook needs a handler function');

  return async (request, ...platform) => {
    const result = await handling.handle<Response>({
      body: rawBody(request, handling),
      headers: request.headers,
      run: async ({ id, timestamp, event }) => responseOrNothing(await handler(event, { id, timestamp, request })),
      statusOf,
      waitUntil: waitUntilOf(platform),
    });
    if ('answer' in result) return result.answer;
    const { response, refusal } = result;
    if (refusal && onError) return withHeaders(await onError(refusal.error, request), refusal.headers);
    return new Response(response.body ?? null, { status: response.status, headers: response.headers });
  };
}

/** The raw body, refused past `maxBytes` without ever reading a body of unknown length whole. */
async function rawBody(request: Request, limits: BodyLimits): Promise<ArrayBuffer> {
  if (request.bodyUsed) throw new WebhookVerificationError('body_already_parsed', BODY_USED_MESSAGE);
  return readWebBody(request.body, request.headers.get('content-length') ?? undefined, limits);
}

const statusOf = (response: Response): number => response.status;

function responseOrNothing(answer: unknown): Response | undefined {
  // Duck-typed: a Response of another realm or polyfill is still one.
  const response = answer as Partial<Response> | null | undefined;
  if (response === undefined || (typeof response === 'object' && response !== null && typeof response.status === 'number')) {
    return response as Response | undefined;
  }
  throw new TypeError('svc-webhooks: the webhook handler must return a Response or nothing');
}

/** The `waitUntil` of the first extra argument that has one, bound to it. */
function waitUntilOf(platform: readonly unknown[]): ((settling: Promise<void>) => void) | undefined {
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

/** Headers such as Retry-After apply whoever writes the body. */
function withHeaders(answer: Response, headers: Refusal['headers']): Response {
  const entries = Object.entries(headers);
  if (entries.length === 0) return answer;
  // A copy, since the answer's own headers may be immutable.
  const copy = new Response(answer.body, answer);
  for (const [name, value] of entries) copy.headers.set(name, value);
  return copy;
}
