/**
 * svc-webhooks/lambda: `verifyWebhook(options, handler)` returns an async AWS
 * Lambda handler, `(event, context) => Promise<result>`, for API Gateway REST
 * APIs (payload 1.0, `multiValueHeaders` included), HTTP APIs (payload 2.0),
 * Function URLs and Application Load Balancers. It decodes a body sent with
 * `isBase64Encoded`, reads headers in any letter case (repeated values joined
 * as Node joins them), verifies, claims the event when `dedup` is set, and
 * calls `handler(event, { id, timestamp, request, context })`. The handler's
 * result is returned as it is; returning nothing answers 204. A refused
 * request is answered with `{ error: { code, message } }`, a throwing handler
 * with a fixed 500, and the claim is settled by that outcome before the
 * function returns (Lambda freezes whatever runs after).
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
import { checkCallback } from '../src/core/option-checks.js';
import { createDeliveryHandling, type DeliveryOptions, type Refusal } from '../src/receive/handle-delivery.js';

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

export interface LambdaWebhookOptions extends DeliveryOptions {
  /**
   * Answers a refused request instead of the default JSON response. The
   * handler is not called either way.
   * @default answers `error.status` with `{ error: { code, message } }`
   */
  readonly onError?: (error: WebhookVerificationError, request: LambdaWebhookEvent) => LambdaWebhookResult | Promise<LambdaWebhookResult>;
}

export type LambdaWebhook = (event: LambdaWebhookEvent, context: Context) => Promise<LambdaWebhookResult>;

export function verifyWebhook(options: LambdaWebhookOptions, handler: LambdaWebhookHandler): LambdaWebhook {
  const handling = createDeliveryHandling(options);
  const { onError } = options;
  checkCallback('onError', onError);
  if (typeof handler !== 'function') throw new TypeError('svc-webhooks: verifyWebhook needs a handler function');

  return async (request, context) => {
    const result = await handling.handle<LambdaWebhookResult>({
      body: bodyOf(request),
      headers: headersOf(request),
      run: async ({ id, timestamp, event }) => resultOrNothing(await handler(event, { id, timestamp, request, context })),
      statusOf: statusCodeOf,
    });
    if ('answer' in result) return result.answer;
    const { response, refusal } = result;
    if (refusal && onError) return withHeaders(await onError(refusal.error, request), refusal.headers, request);
    return { statusCode: response.status, ...headersField(response.headers, request), body: response.body ?? '', isBase64Encoded: false };
  };
}

const statusCodeOf = (result: LambdaWebhookResult): number => result.statusCode;

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

function resultOrNothing(answer: unknown): LambdaWebhookResult | undefined {
  const result = answer as Partial<LambdaWebhookResult> | null | undefined;
  if (result === undefined || (typeof result === 'object' && result !== null && Number.isInteger(result.statusCode))) {
    return result as LambdaWebhookResult | undefined;
  }
  throw new TypeError('svc-webhooks: the webhook handler must return { statusCode, ... } or nothing');
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

/** Headers such as Retry-After apply whoever writes the body. */
function withHeaders(answer: LambdaWebhookResult, headers: Refusal['headers'], request: LambdaWebhookEvent): LambdaWebhookResult {
  if (Object.keys(headers).length === 0) return answer;
  const field = headersField(headers, request);
  if ('headers' in field) return { ...answer, headers: { ...field.headers, ...answer.headers } };
  return { ...answer, multiValueHeaders: { ...field.multiValueHeaders, ...(answer as ALBResult).multiValueHeaders } };
}
