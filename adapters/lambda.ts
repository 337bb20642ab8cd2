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
import type { WebhookDelivery } from '../src/core/delivery.js';
import { WebhookVerificationError, type WebhookError } from '../src/core/errors.js';
import type { WebhookEvent } from '../src/core/event.js';
import type { HeaderGetter } from '../src/core/headers.js';
import type { EventSchemas } from '../src/process/handler-types.js';
import { createPipeline, type EntryOptions, type PipelineOptions } from '../src/receive/pipeline.js';
import type { TenantOf } from '../src/receive/tenants.js';
import type { HandlerMode, HandlersMode, HandoffMode } from '../src/receive/what-runs.js';

/** The HTTP events a webhook reaches Lambda by. A Function URL sends the HTTP API (2.0) shape. */
export type LambdaWebhookEvent = APIGatewayProxyEvent | APIGatewayProxyEventV2 | ALBEvent;

/** An HTTP answer to any of those sources: `statusCode` is required, since it settles the dedup claim. */
export type LambdaWebhookResult =
  | APIGatewayProxyResult
  | ALBResult
  | (APIGatewayProxyStructuredResultV2 & {
      /** The HTTP status, which settles the dedup claim. */
      statusCode: number;
    });

/** What the handler gets besides the webhook event: the verified delivery, the Lambda event and its context. */
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

/** The options of the Lambda entry besides what runs. */
export interface LambdaEntryOptions extends EntryOptions {
  /**
   * Which tenant's endpoint a request is for, where one receiver serves many:
   * `(request) => ('pathParameters' in request ? request.pathParameters?.tenant : undefined)`.
   * With it, `secret` is a function from the tenant to its secret, and the
   * tenant reaches the delivery.
   * @default undefined (one endpoint)
   */
  readonly tenant?: TenantOf<LambdaWebhookEvent>;
  /**
   * Answers a refused request instead of the default JSON response, within
   * `onErrorTimeoutMs`. No handler runs for it. The handlers' refusals
   * (`handler_failed`, `invalid_event_data`, `unknown_event_type`) come here too.
   * @default answers `error.status` with `{ error: { code, message } }`
   */
  readonly onError?: (error: WebhookError, request: LambdaWebhookEvent) => LambdaWebhookResult | Promise<LambdaWebhookResult>;
}

/** The options of `verifyWebhook` without a handler: the entry's, and `on` or `handoff`. */
export type LambdaWebhookOptions<S extends EventSchemas = {}> = LambdaEntryOptions & (HandlersMode<S> | HandoffMode);

/** The options of `verifyWebhook` with a handler: the entry's, without `on` and `handoff`. */
export type LambdaHandlerOptions = LambdaEntryOptions & HandlerMode;

/** The Lambda handler `verifyWebhook` returns. */
export type LambdaWebhook = (event: LambdaWebhookEvent, context: Context) => Promise<LambdaWebhookResult>;

/** One invocation. */
interface LambdaRequest {
  readonly request: LambdaWebhookEvent;
  readonly context: Context;
}

/** A Lambda handler that answers each request by itself: with the handler of its event's type in `on`, or 202 once `handoff` recorded it. */
export function verifyWebhook<S extends EventSchemas = {}>(options: LambdaWebhookOptions<S>): LambdaWebhook;
/** A Lambda handler that calls `handler` for each verified event and returns what it returns (204 for nothing). */
export function verifyWebhook(options: LambdaHandlerOptions, handler: LambdaWebhookHandler): LambdaWebhook;
/** Throws `TypeError` for bad options, or for a handler beside `on` or `handoff`. */
export function verifyWebhook(options: LambdaWebhookOptions<EventSchemas> | LambdaHandlerOptions, handler?: LambdaWebhookHandler): LambdaWebhook {
  const { onError } = options;
  const receive = createPipeline<LambdaRequest, LambdaWebhookResult>(
    options as PipelineOptions,
    {
      entry: 'lambda',
      body: ({ request }) => bodyOf(request),
      headers: ({ request }) => headersOf(request),
      userRequest: ({ request }) => request,
      send: ({ request }, { status, headers, body }) =>
        body === undefined ? result(status, headers, request, '') : result(status, { ...headers, 'content-type': 'application/json' }, request, JSON.stringify(body)),
      statusOf: (_request, result) => result!.statusCode,
      onError:
        onError &&
        (async ({ request }, error, headers) => {
          const answer = await onError(error, request);
          if (!isResult(answer)) throw new TypeError('it answered no { statusCode, ... }');
          return withMissingHeaders(answer, headers, request);
        }),
    },
    {
      handler,
      shape: { isAnswer: isResult, described: '{ statusCode, ... }', statusOf: (result: LambdaWebhookResult) => result.statusCode },
      // A literal of the delivery's fields, not a spread: a spread and a field make a hidden class per request.
      context: ({ request, context }, { event, id, timestamp, keyId, tenant, dedupKey }): LambdaWebhookContext => ({
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

const NO_HEADERS: HeaderGetter = { get: () => null };

/**
 * Headers read in any letter case, every value of a repeated one joined.
 * `multiValueHeaders` (REST APIs, and ALBs that enable them) holds every
 * value, where `headers` holds only the last; an HTTP API already joined
 * them. Only own keys count: a header named `constructor` is just a header.
 */
function headersOf(request: LambdaWebhookEvent | null): HeaderGetter {
  // An event that is no object (a warmer's ping) has no headers: the body check refuses it.
  if (typeof request !== 'object' || request === null) return NO_HEADERS;
  const source: Readonly<Record<string, unknown>> = ('multiValueHeaders' in request ? request.multiValueHeaders : undefined) ?? request.headers ?? {};
  return {
    get(name) {
      // Most headers come once: the first value as it is, a list only from a second one on. The
      // names asked for are lower case, so a key equal to one needs no lower-casing.
      let first: string | null = null;
      let values: string[] | undefined;
      const add = (value: unknown): void => {
        if (typeof value !== 'string') return;
        if (first === null) first = value;
        else (values ??= [first]).push(value);
      };
      for (const key of Object.keys(source)) {
        if (key.length !== name.length || (key !== name && key.toLowerCase() !== name)) continue;
        const value = source[key];
        if (Array.isArray(value)) value.forEach(add);
        else add(value);
      }
      return values === undefined ? first : values.join(', ');
    },
  };
}

/** The result of `status`, `headers` and `body`, as a literal: a spread of the headers field makes a hidden class per answer. */
function result(statusCode: number, headers: Readonly<Record<string, string>>, request: LambdaWebhookEvent, body: string): LambdaWebhookResult {
  const field = headersField(headers, request);
  return 'headers' in field
    ? { statusCode, headers: field.headers, body, isBase64Encoded: false }
    : { statusCode, multiValueHeaders: field.multiValueHeaders, body, isBase64Encoded: false };
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
