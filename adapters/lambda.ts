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
import type { WebhookVerificationError } from '../src/core/errors.js';
import type { WebhookEvent } from '../src/core/event.js';
import type { HeaderRecord } from '../src/core/headers.js';
import { createAnsweringEntry, type AnsweringOptions, type WithoutHandlerOptions } from '../src/receive/answering-entry.js';
import type { EventHandlers, EventSchemas } from '../src/receive/event-handlers.js';

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

export interface LambdaWebhookOptions<S extends EventSchemas = {}> extends AnsweringOptions<S> {
  /**
   * Answers a refused request instead of the default JSON response, within
   * `onErrorTimeoutMs`. No handler runs for it. The handlers' refusals
   * (`handler_failed`, `invalid_event_data`, `unknown_event_type`) come here too.
   * @default answers `error.status` with `{ error: { code, message } }`
   */
  readonly onError?: (error: WebhookVerificationError, request: LambdaWebhookEvent) => LambdaWebhookResult | Promise<LambdaWebhookResult>;
}

export type LambdaWebhook = (event: LambdaWebhookEvent, context: Context) => Promise<LambdaWebhookResult>;

const results = { isAnswer: isResult, described: '{ statusCode, ... }', statusOf: (result: LambdaWebhookResult) => result.statusCode };

/** Answers each request by itself with the handler of its event's type in `on`. */
export function verifyWebhook<S extends EventSchemas = {}>(options: LambdaWebhookOptions<S> & { readonly on: EventHandlers<S> }): LambdaWebhook;
/** Calls `handler` for each verified event and returns what it returns. */
export function verifyWebhook(options: LambdaWebhookOptions & WithoutHandlerOptions, handler: LambdaWebhookHandler): LambdaWebhook;
export function verifyWebhook(options: LambdaWebhookOptions<EventSchemas>, handler?: LambdaWebhookHandler): LambdaWebhook {
  const entry = createAnsweringEntry<LambdaWebhookResult, LambdaWebhookContext>(options, handler, results);
  const { onError } = options;

  return async (request, context) => {
    const result = await entry.answer({
      body: bodyOf(request),
      headers: headersOf(request),
      contextOf: ({ id, timestamp }) => ({ id, timestamp, request, context }),
      onError: onError && ((error) => onError(error, request)),
      withHeaders: (answer, headers) => withMissingHeaders(answer, headers, request),
    });
    if ('answer' in result) return result.answer;
    const { status, headers, body } = result.response;
    const sent = body === undefined ? { headers, body: '' } : { headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) };
    return { statusCode: status, ...headersField(sent.headers, request), body: sent.body, isBase64Encoded: false };
  };
}

function bodyOf({ body, isBase64Encoded }: LambdaWebhookEvent): string | Buffer {
  if (body === undefined || body === null) return '';
  return isBase64Encoded ? Buffer.from(body, 'base64') : body;
}

/**
 * Every header under its lower-case name, all values of a repeated one kept.
 * `multiValueHeaders` (REST APIs, and ALBs that enable them) holds every
 * value, where `headers` holds only the last; an HTTP API already joined them.
 */
function headersOf(request: LambdaWebhookEvent): HeaderRecord {
  const source = ('multiValueHeaders' in request ? request.multiValueHeaders : undefined) ?? request.headers ?? {};
  const merged: Record<string, string[]> = {};
  for (const [name, value] of Object.entries(source)) {
    if (value === undefined || value === null) continue;
    (merged[name.toLowerCase()] ??= []).push(...(Array.isArray(value) ? value : [value]));
  }
  return merged;
}

function isResult(value: unknown): value is LambdaWebhookResult {
  const result = value as Partial<LambdaWebhookResult> | null;
  return typeof result === 'object' && result !== null && Number.isInteger(result.statusCode);
}

/** An ALB that sends `multiValueHeaders` takes only those back; every other source takes `headers`. */
function usesMultiValueHeaders(request: LambdaWebhookEvent): boolean {
  // A hand-made test event may lack the requestContext that AWS always sends.
  return 'elb' in (request.requestContext ?? {}) && 'multiValueHeaders' in request && request.multiValueHeaders !== undefined;
}

function headersField(
  headers: Readonly<Record<string, string>>,
  request: LambdaWebhookEvent,
): { headers: Record<string, string> } | { multiValueHeaders: Record<string, string[]> } {
  if (!usesMultiValueHeaders(request)) return { headers: { ...headers } };
  return { multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, [value]])) };
}

/** `answer` with those of `headers` it lacks: Retry-After and the like apply whoever wrote the body. */
function withMissingHeaders(answer: LambdaWebhookResult, headers: Readonly<Record<string, string>>, request: LambdaWebhookEvent): LambdaWebhookResult {
  if (Object.keys(headers).length === 0) return answer;
  const field = headersField(headers, request);
  if ('headers' in field) return { ...answer, headers: { ...field.headers, ...answer.headers } };
  return { ...answer, multiValueHeaders: { ...field.multiValueHeaders, ...(answer as ALBResult).multiValueHeaders } };
}
