/**
 * What AWS's HTTP sources hand a Lambda function and take back from it: API
 * Gateway REST APIs (payload 1.0), HTTP APIs and Function URLs (2.0), and
 * Application Load Balancers. The body decoded, the headers read in any
 * letter case, and a result built in the shape the request's source takes.
 */
import { Buffer } from 'node:buffer';
import type { ALBEvent, ALBResult, APIGatewayProxyEvent, APIGatewayProxyEventV2, APIGatewayProxyResult, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { WebhookBodyError } from '../src/core/errors.js';
import type { HeaderGetter } from '../src/core/headers.js';
import type { HostAnswers } from '../src/receive/platform.js';

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

/**
 * The raw body. Only a boolean `isBase64Encoded: true` decodes it: AWS sends
 * a boolean, and a string `"false"` must not turn a body into bytes. An event
 * of none of AWS's HTTP shapes (a warmer's ping, a queue's batch) means the
 * function is wired to the wrong source.
 */
export function bodyOf(request: LambdaWebhookEvent | null): string | Buffer {
  if (!isHttpEvent(request)) throw notHttp('the Lambda event is no HTTP request');
  const { body, isBase64Encoded } = request;
  if (body === undefined || body === null) return '';
  if (typeof body !== 'string') throw notHttp('the Lambda event\'s body is no string');
  return isBase64Encoded === true ? Buffer.from(body, 'base64') : body;
}

function notHttp(message: string): WebhookBodyError {
  return new WebhookBodyError('not_http_request', message);
}

/**
 * Whether `event` has any mark of an HTTP source: headers (REST sends `null`
 * for none, so also its `httpMethod`), HTTP API's `rawPath`, or a request context.
 */
function isHttpEvent(event: unknown): event is LambdaWebhookEvent {
  if (typeof event !== 'object' || event === null) return false;
  const { headers, multiValueHeaders, httpMethod, rawPath, requestContext } = event as Readonly<Record<string, unknown>>;
  return isObject(headers) || isObject(multiValueHeaders) || isObject(requestContext) || typeof httpMethod === 'string' || typeof rawPath === 'string';
}

function isObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null;
}

const NO_HEADERS: HeaderGetter = { get: () => null };

/**
 * Headers read in any letter case, every value of a repeated one joined.
 * `multiValueHeaders` (REST APIs, and ALBs that enable them) holds every
 * value, where `headers` holds only the last; an HTTP API already joined
 * them. Only own keys count: a header named `constructor` is just a header.
 */
export function headersOf(request: LambdaWebhookEvent | null): HeaderGetter {
  // An event that is no object (a warmer's ping) has no headers: the body check refuses it.
  if (typeof request !== 'object' || request === null) return NO_HEADERS;
  const source: Readonly<Record<string, unknown>> = ('multiValueHeaders' in request ? request.multiValueHeaders : undefined) ?? request.headers ?? {};
  // Listed once for the three or four headers a request is asked for, not once each.
  let names: string[] | undefined;
  return {
    get(name) {
      // Most headers come once: the first value as it is, a list only from a second one on. The
      // names asked for are lower case, so a key equal to one needs no lower-casing.
      let first: string | null = null;
      let values: string[] | undefined;
      for (const key of (names ??= Object.keys(source))) {
        if (key.length !== name.length || (key !== name && key.toLowerCase() !== name)) continue;
        const value = source[key];
        for (const one of Array.isArray(value) ? (value as unknown[]) : [value]) {
          if (typeof one !== 'string') continue;
          if (first === null) first = one;
          else (values ??= [first]).push(one);
        }
      }
      return values === undefined ? first : values.join(', ');
    },
  };
}

/** Lambda's results, in the shape the request's source takes. */
export const LAMBDA_ANSWERS: HostAnswers<LambdaWebhookEvent, LambdaWebhookResult> = {
  isAnswer: isResult,
  described: '{ statusCode, ... }',
  statusOf: (result) => result.statusCode,
  make: (request, { status, headers, body }) =>
    body === undefined ? result(status, headers, request, '') : result(status, { ...headers, 'content-type': 'application/json' }, request, JSON.stringify(body)),
  withMissingHeaders,
};

/** The result of `status`, `headers` and `body`, as a literal: a spread of the headers field makes a hidden class per answer. */
function result(statusCode: number, headers: Readonly<Record<string, string>>, request: LambdaWebhookEvent, body: string): LambdaWebhookResult {
  return usesMultiValueHeaders(request)
    ? { statusCode, multiValueHeaders: multiValued(headers), body, isBase64Encoded: false }
    : { statusCode, headers: { ...headers }, body, isBase64Encoded: false };
}

/** Whether `value` is a result Lambda can send: an object with a whole-number `statusCode`. */
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

/** `headers` as an ALB's `multiValueHeaders`: each value in a list of its own. */
function multiValued(headers: Readonly<Record<string, string>>): Record<string, string[]> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, [value]]));
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
  if (!usesMultiValueHeaders(request)) return { ...answer, headers: { ...missing, ...answer.headers } };
  return { ...answer, multiValueHeaders: { ...multiValued(missing), ...(answer as ALBResult).multiValueHeaders } };
}
