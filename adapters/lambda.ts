/**
 * svc-webhooks/lambda: `verifyWebhook(options)` with `on`, or
 * `verifyWebhook(options, handler)`, returns an async AWS Lambda handler,
 * `(event, context) => Promise<result>`, for API Gateway REST APIs (payload
 * 1.0, `multiValueHeaders` included), HTTP APIs (payload 2.0), Function URLs
 * and Application Load Balancers. It decodes a body sent with
 * `isBase64Encoded`, reads headers in any letter case (repeated values joined
 * as Node joins them), verifies, claims the event, and runs the handler of
 * the event's type in `on`, or calls `handler(event, { id, timestamp,
 * request, context })`, whose result is returned as it is (nothing answers
 * 204). A refused request is answered with `{ error: { code, message } }` or
 * by `onError`, a throwing handler with a fixed 500, and the claim is settled
 * by that outcome, waited for (within a bound) before the function returns,
 * since Lambda freezes whatever runs after.
 */
import { Buffer } from 'node:buffer';
import type {
  ALBEvent,
  ALBResult,
  APIGatewayProxyEvent,
  APIGatewayProxyEventV2,
  APIGatewayProxyResult,
  APIGatewayProxyStructuredResultV2,
  Context,
} from 'aws-lambda';
import { WebhookVerificationError } from '../src/core/errors.js';
import type { WebhookEvent } from '../src/core/event.js';
import type { HeaderGetter } from '../src/core/headers.js';
import type { EventHandlers, EventSchemas, WithoutHandlerOptions } from '../src/receive/handler-types.js';
import type { Handoff } from '../src/receive/handoff.js';
import { createPipeline, type EntryOptions, type SingleHandler } from '../src/receive/pipeline.js';

/** The HTTP events a webhook reaches Lambda by. A Function URL sends the HTTP API (2.0) shape. */
export type LambdaWebhookEvent = APIGatewayProxyEvent | APIGatewayProxyEventV2 | ALBEvent;

/** An HTTP answer to any of those sources: `statusCode` is required, since it settles the dedup claim. */
export type LambdaWebhookResult = APIGatewayProxyResult | ALBResult | (APIGatewayProxyStructuredResultV2 & { statusCode: number });

/** What the handler gets besides the webhook event. */
export interface LambdaWebhookContext {
  /** The verified `webhook-id`, the key to deduplicate on. */
  readonly id: string;
  /** The verified `webhook-timestamp`, in seconds since the Unix epoch. */
  readonly timestamp: number;
  /** Which secret verified it (see `KeyedSecret`). */
  readonly keyId: string;
  /** The tenant (see the `tenant` option); absent without one. */
  readonly tenant?: string;
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

export interface LambdaWebhookOptions<S extends EventSchemas = {}> extends EntryOptions<S> {
  /**
   * Which tenant's endpoint a request is for, where one receiver serves many:
   * `(request) => ('pathParameters' in request ? request.pathParameters?.tenant : undefined)`. With it, `secret` may be a function from the tenant to its secret,
   * and the tenant scopes deduplication and reaches the handlers' context.
   * @default undefined (one endpoint)
   */
  readonly tenant?: (request: LambdaWebhookEvent) => unknown;
  /**
   * Answers a refused request instead of the default JSON response, within
   * `onErrorTimeoutMs`. No handler runs for it. The handlers' refusals
   * (`handler_failed`, `invalid_event_data`, `unknown_event_type`) come here too.
   * @default answers `error.status` with `{ error: { code, message } }`
   */
  readonly onError?: (error: WebhookVerificationError, request: LambdaWebhookEvent) => LambdaWebhookResult | Promise<LambdaWebhookResult>;
}

export type LambdaWebhook = (event: LambdaWebhookEvent, context: Context) => Promise<LambdaWebhookResult>;

/** One invocation. */
interface LambdaRequest {
  readonly request: LambdaWebhookEvent;
  readonly context: Context;
}

/** Answers each request by itself with the handler of its event's type in `on`. */
export function verifyWebhook<S extends EventSchemas = {}>(options: LambdaWebhookOptions<S> & { readonly on: EventHandlers<S> }): LambdaWebhook;
/** Calls `handler` for each verified event and returns what it returns. */
export function verifyWebhook(options: LambdaWebhookOptions & WithoutHandlerOptions, handler: LambdaWebhookHandler): LambdaWebhook;
/** Hands each verified event to a durable queue (`handoff`) and answers 202 once it is recorded. */
export function verifyWebhook(options: LambdaWebhookOptions & WithoutHandlerOptions & { readonly handoff: Handoff }): LambdaWebhook;
export function verifyWebhook(options: LambdaWebhookOptions<EventSchemas>, handler?: LambdaWebhookHandler): LambdaWebhook {
  const { onError } = options;
  const receive = createPipeline<LambdaRequest, LambdaWebhookResult, EventSchemas>(
    options,
    {
      entry: 'lambda',
      body: ({ request }) => bodyOf(request),
      headers: ({ request }) => headersOf(request),
      userRequest: ({ request }) => request,
      send({ request }, { status, headers, body }) {
        if (body === undefined) return { statusCode: status, ...headersField(headers, request), body: '', isBase64Encoded: false };
        const json = { ...headers, 'content-type': 'application/json' };
        return { statusCode: status, ...headersField(json, request), body: JSON.stringify(body), isBase64Encoded: false };
      },
      statusOf: (_request, result) => result!.statusCode,
      onError:
        onError &&
        (async ({ request }, error, headers) => {
          const answer = await onError(error, request);
          if (!isResult(answer)) throw new TypeError('it answered no { statusCode, ... }');
          return withMissingHeaders(answer, headers, request);
        }),
      single: {
        shape: { isAnswer: isResult, described: '{ statusCode, ... }', statusOf: (result: LambdaWebhookResult) => result.statusCode },
        context: ({ request, context }, { id, timestamp, keyId, tenant }): LambdaWebhookContext =>
          tenant === undefined ? { id, timestamp, keyId, request, context } : { id, timestamp, keyId, tenant, request, context },
      },
    },
    handler as SingleHandler | undefined,
  );
  // Never undefined: there is no route.
  return (request, context) => receive({ request, context }) as Promise<LambdaWebhookResult>;
}

/**
 * The raw body. Only a boolean `isBase64Encoded: true` decodes it: AWS sends
 * a boolean, and a string `"false"` must not turn a body into bytes.
 */
function bodyOf(request: LambdaWebhookEvent | null): string | Buffer {
  if (typeof request !== 'object' || request === null) throw notHttp('the Lambda event is no HTTP request');
  const { body, isBase64Encoded } = request;
  if (body === undefined || body === null) return '';
  if (typeof body !== 'string') throw notHttp('the Lambda event\'s body is no string');
  return isBase64Encoded === true ? Buffer.from(body, 'base64') : body;
}

function notHttp(message: string): WebhookVerificationError {
  return new WebhookVerificationError('invalid_payload', message);
}

/**
 * Headers read in any letter case, every value of a repeated one joined.
 * `multiValueHeaders` (REST APIs, and ALBs that enable them) holds every
 * value, where `headers` holds only the last; an HTTP API already joined
 * them. Only own keys count: a header named `constructor` is just a header.
 */
function headersOf(request: LambdaWebhookEvent): HeaderGetter {
  const source: Readonly<Record<string, unknown>> = ('multiValueHeaders' in request ? request.multiValueHeaders : undefined) ?? request.headers ?? {};
  return {
    get(name) {
      const values: string[] = [];
      for (const key of Object.keys(source)) {
        if (key.length !== name.length || key.toLowerCase() !== name) continue;
        const value = source[key];
        if (typeof value === 'string') values.push(value);
        else if (Array.isArray(value)) for (const one of value) if (typeof one === 'string') values.push(one);
      }
      return values.length === 0 ? null : values.join(', ');
    },
  };
}

function isResult(value: unknown): value is LambdaWebhookResult {
  const result = value as Partial<LambdaWebhookResult> | null;
  return typeof result === 'object' && result !== null && Number.isInteger(result.statusCode);
}

/** An ALB that sends `multiValueHeaders` takes only those back; every other source takes `headers`. */
function usesMultiValueHeaders(request: LambdaWebhookEvent | null): boolean {
  // A hand-made test event may lack the requestContext that AWS always sends, or be no object at all.
  if (typeof request !== 'object' || request === null || typeof request.requestContext !== 'object' || request.requestContext === null) return false;
  return 'elb' in request.requestContext && 'multiValueHeaders' in request && request.multiValueHeaders !== undefined;
}

function headersField(
  headers: Readonly<Record<string, string>>,
  request: LambdaWebhookEvent,
): { headers: Record<string, string> } | { multiValueHeaders: Record<string, string[]> } {
  if (!usesMultiValueHeaders(request)) return { headers: { ...headers } };
  return { multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, [value]])) };
}

/**
 * `answer` with those of `headers` it lacks, whatever the letter case it
 * gave its own in: Retry-After and the like apply whoever wrote the body.
 */
function withMissingHeaders(answer: LambdaWebhookResult, headers: Readonly<Record<string, string>>, request: LambdaWebhookEvent): LambdaWebhookResult {
  const own = new Set(
    [...Object.keys(answer.headers ?? {}), ...Object.keys((answer as ALBResult).multiValueHeaders ?? {})].map((name) => name.toLowerCase()),
  );
  const missing = Object.fromEntries(Object.entries(headers).filter(([name]) => !own.has(name)));
  if (Object.keys(missing).length === 0) return answer;
  const field = headersField(missing, request);
  if ('headers' in field) return { ...answer, headers: { ...field.headers, ...answer.headers } };
  return { ...answer, multiValueHeaders: { ...field.multiValueHeaders, ...(answer as ALBResult).multiValueHeaders } };
}
