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
import type { WebhookError } from '../src/core/errors.js';
import type { WebhookEvent } from '../src/core/event.js';
import type { EventSchemas } from '../src/process/handler-types.js';
import { createPipeline, type EntryOptions, type PipelineOptions } from '../src/receive/pipeline.js';
import type { SecretOrTenants } from '../src/receive/receiver.js';
import { readRequestBody } from '../src/receive/web-platform.js';
import type { SingleHandlerMode, HandlersMode, HandoffMode } from '../src/receive/what-runs.js';

/** What the handler gets besides the event: the verified delivery, the request and the invocation's context. */
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
export interface AzureEntryOptions extends EntryOptions {
  /**
   * Answers a refused request instead of the default JSON response, within
   * `onErrorTimeoutMs`. No handler runs for it. The handlers' refusals
   * (`handler_failed`, `invalid_event_data`, `unknown_event_type`) come here too.
   * @default answers `error.status` with `{ error: { code, message } }`
   */
  readonly onError?: (error: WebhookError, request: HttpRequest, context: InvocationContext) => HttpResponseInit | Promise<HttpResponseInit>;
}

/** The options of `verifyWebhook` without a handler: the entry's, and `on` or `handoff`. */
export type AzureWebhookOptions<S extends EventSchemas = {}> = AzureEntryOptions & SecretOrTenants<HttpRequest> & (HandlersMode<S> | HandoffMode);

/** The options of `verifyWebhook` with a handler: the entry's, without `on` and `handoff`. */
export type AzureHandlerOptions = AzureEntryOptions & SecretOrTenants<HttpRequest> & SingleHandlerMode;

/** The HTTP handler `verifyWebhook` returns, for `app.http(name, { methods: ['POST'], handler })`. */
export type AzureWebhook = (request: HttpRequest, context: InvocationContext) => Promise<HttpResponseInit>;

/** One invocation. */
interface AzureRequest {
  readonly request: HttpRequest;
  readonly context: InvocationContext;
}

const BODY_USED_MESSAGE = 'the request body was read before verifyWebhook; hand it the request unread';

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
  const { onError } = options;
  const receive = createPipeline<AzureRequest, HttpResponseInit>(
    options as PipelineOptions,
    {
      entry: 'azure',
      // Azure's HttpRequest reads as a Fetch Request does: its body stream, bodyUsed and arrayBuffer().
      body: ({ request }, limits) => readRequestBody(request as unknown as Request, limits, BODY_USED_MESSAGE),
      headers: ({ request }) => request.headers,
      userRequest: ({ request }) => request,
      send: (_request, { status, headers, body }) =>
        body === undefined ? { status, headers: { ...headers } } : { status, headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) },
      statusOf: (_request, answer) => statusOf(answer!),
      // Nobody reads this answer.
      senderGone: () => ({ status: 400 }),
      onError:
        onError &&
        (async ({ request, context }, error, headers) => {
          const answer = await onError(error, request, context);
          if (!isAnswer(answer)) throw new TypeError('it answered no { status, ... }');
          return withMissingHeaders(answer, headers);
        }),
    },
    {
      handler,
      shape: { isAnswer, described: '{ status, ... }', statusOf },
      // A literal of the delivery's fields, not a spread: a spread and a field make a hidden class per request.
      context: ({ request, context }, { event, id, timestamp, keyId, tenant, dedupKey }): AzureWebhookContext => ({
        event,
        id,
        timestamp,
        keyId,
        tenant,
        dedupKey,
        request,
        context,
      }),
    },
  );
  // Never undefined: there is no route.
  return (request, context) => receive({ request, context }) as Promise<HttpResponseInit>;
}

/** An answer Azure takes: an object whose `status`, if any, is an HTTP status. */
function isAnswer(value: unknown): value is HttpResponseInit {
  const answer = value as HttpResponseInit | null;
  return typeof answer === 'object' && answer !== null && (answer.status === undefined || Number.isInteger(answer.status));
}

/** The status Azure sends for `answer`: 200 when it names none. */
function statusOf(answer: HttpResponseInit): number {
  return answer.status ?? 200;
}

/** `answer` with those of `headers` it lacks, in any letter case: Retry-After and the like apply whoever wrote the body. */
function withMissingHeaders(answer: HttpResponseInit, headers: Readonly<Record<string, string>>): HttpResponseInit {
  const own = new Headers(answer.headers as ConstructorParameters<typeof Headers>[0]);
  const missing = Object.entries(headers).filter(([name]) => !own.has(name));
  if (missing.length === 0) return answer;
  for (const [name, value] of missing) own.set(name, value);
  return { ...answer, headers: Object.fromEntries(own) };
}
