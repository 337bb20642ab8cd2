/**
 * svc-webhooks/hono: `verifyWebhook(options)` is Hono middleware, on any
 * runtime, that verifies the raw body, claims its event, and sets
 * `c.var.webhook`, the verified delivery. Hono caches the body, so the
 * route may still read it. A refused request is answered here with
 * `{ error: { code, message } }` and the route never runs. With `on` or
 * `handoff`, it answers every request itself: no route is needed.
 * @packageDocumentation
 */
import type { Context, MiddlewareHandler, Next } from 'hono';
import type { ContentfulStatusCode, StatusCode } from 'hono/utils/http-status';
import type { WebhookDelivery } from '../src/core/delivery.js';
import type { WebhookError } from '../src/core/errors.js';
import type { EventSchemas } from '../src/process/handler-types.js';
import type { BodyLimits } from '../src/receive/body-limits.js';
import { createPipeline, type EntryOptions, type PipelineOptions } from '../src/receive/pipeline.js';
import { entryOptions, type SecretOrTenants } from '../src/receive/receiver.js';
import { onErrorAnswer } from '../src/receive/platform.js';
import { readRequestBody, WEB_ANSWERS } from '../src/receive/web-platform.js';
import type { MiddlewareMode } from '../src/receive/what-runs.js';

declare module 'hono' {
  interface ContextVariableMap {
    /** The verified delivery: its event, id, timestamp, keyId, tenant, dedupKey and stale. Set only on routes behind `verifyWebhook`. */
    webhook: WebhookDelivery;
  }
}

/**
 * The options of the Hono entry besides its secret and what runs. Where one receiver
 * serves many tenants, `tenants.of` reads the tenant from the request:
 * `(c) => c.req.param('tenant')` on a route `/webhooks/:tenant`; the tenant
 * reaches the delivery as `c.var.webhook.tenant`.
 */
export interface HonoEntryOptions extends EntryOptions {
  /**
   * Answers a refused request instead of the default JSON response, within
   * `onErrorTimeoutMs`. The route is not called either way. With `on`, the
   * handlers' refusals (`handler_failed`, `invalid_event_data`,
   * `unknown_event_type`) come here too.
   * @default answers `error.status` with `{ error: { code, message } }`
   */
  readonly onError?: (error: WebhookError, c: Context) => Response | Promise<Response>;
}

/** The options of `verifyWebhook`: the entry's, and what runs (`on`, `handoff`, or neither for the route). */
export type HonoWebhookOptions<S extends EventSchemas = {}> = HonoEntryOptions & SecretOrTenants<Context> & MiddlewareMode<S>;

interface HonoRequest {
  readonly c: Context;
  readonly next: Next;
}

const BODY_USED_MESSAGE =
  'the request body was read before verifyWebhook, outside Hono (c.req.raw); read it with c.req.arrayBuffer(), c.req.text() or c.req.json() instead, which keep it';

/**
 * Hono middleware that verifies each request and answers refusals itself.
 * Without `on` or `handoff`, the route after it runs under the claim with
 * `c.var.webhook` set, and settles it by the status it answers. The claim's
 * settle goes to the runtime's `waitUntil` where there is one. Throws
 * `WebhookOptionsError` for bad options.
 * @example
 * ```ts
 * import { Hono } from 'hono';
 * import { verifyWebhook } from 'svc-webhooks/hono';
 *
 * const app = new Hono();
 * app.post('/webhooks', verifyWebhook({ secret: process.env.WEBHOOK_SECRET! }), (c) => {
 *   queue.add(c.var.webhook.event);
 *   return c.body(null, 204);
 * });
 * ```
 */
export function verifyWebhook<S extends EventSchemas = {}>(options: HonoWebhookOptions<S>): MiddlewareHandler {
  const { onError } = entryOptions(options);
  const receive = createPipeline<HonoRequest, Response>(
    options as PipelineOptions,
    {
      entry: 'hono',
      body: ({ c }, limits) => rawBody(c, limits),
      headers: ({ c }) => c.req.raw.headers,
      userRequest: ({ c }) => c,
      send({ c }, { status, headers, body }) {
        for (const name in headers) c.header(name, headers[name]);
        if (body === undefined) return c.body(null, status as StatusCode);
        return c.json(body, status as ContentfulStatusCode);
      },
      // Undefined once the route answered: its response is Hono's.
      statusOf: ({ c }, answer) => (answer ?? c.res).status,
      // Its sender is gone: this answer reaches nobody, and nothing is thrown for Hono to log.
      senderGone: ({ c }) => c.body(null, 400),
      onError: onError && (async ({ c }, error, headers) => onErrorAnswer(WEB_ANSWERS, await onError(error, c), headers, c)),
      keepAlive({ c }, work) {
        let context: { waitUntil(work: Promise<unknown>): void };
        try {
          context = c.executionCtx;
        } catch {
          // Hono's getter throws where the runtime gave no execution context: nothing cuts the work short.
          return;
        }
        context.waitUntil(work);
      },
    },
    {
      async route({ c, next }, delivery) {
        c.set('webhook', delivery);
        // Hono turns a route's error into its error response, so c.res holds the outcome either way.
        await next();
        return c.res.status;
      },
    },
  );
  return (c, next) => receive({ c, next });
}

/**
 * The raw body: the one Hono cached if a middleware before read it (the same
 * bytes), else read within the receiver's limits and left in Hono's cache,
 * so the route can read it again.
 */
async function rawBody(c: Context, limits: BodyLimits): Promise<ArrayBuffer | Uint8Array> {
  // Hono derives an ArrayBuffer from whichever form it cached (text, for c.req.json()).
  if (Object.keys(c.req.bodyCache).length > 0) return c.req.arrayBuffer();
  const body = await readRequestBody(c.req.raw, limits, BODY_USED_MESSAGE);
  // A view as long as its buffer is all of it.
  const whole = body.byteLength === body.buffer.byteLength ? body.buffer : copyOf(body);
  // Hono caches the promise (its other readers chain on it), though its type names the value.
  c.req.bodyCache.arrayBuffer = Promise.resolve(whole) as unknown as ArrayBuffer;
  return body;
}

/** The bytes of a view, in an ArrayBuffer of their own; a Buffer's own slice() would share its pool's. */
function copyOf(view: Uint8Array): ArrayBuffer {
  const copy = new Uint8Array(view.byteLength);
  copy.set(view);
  return copy.buffer;
}
