/**
 * Lambda and Azure handlers called in this process as their platforms call
 * them: each request turned into the platform's event or request, the
 * handler called with a test context, and its result turned into the HTTP
 * answer the platform would send. `simulateDelivery` delivers to them
 * through this, as to a Fetch handler.
 */
import { Buffer } from 'node:buffer';
import { checkCallback } from '../base/option-checks.js';
import { WebhookOptionsError } from '../base/options-error.js';
import { azureRequestOf, checkAzureRequestOptions, withLength, type AzureRequestOptions, type TestAzureRequest } from './azure-request.js';
import { testAzureContext, type TestAzureContext } from './azure-context.js';
import type { DeliveryTarget } from './delivery.js';
import { testLambdaContext, type TestLambdaContext } from './lambda-context.js';
import {
  checkLambdaEventOptions,
  lambdaEventOf,
  type LambdaAlbEvent,
  type LambdaEventFormat,
  type LambdaEventOptions,
  type LambdaHttpApiEvent,
  type LambdaRestEvent,
} from './lambda-event.js';

/**
 * A Lambda handler called in this process, `(event, context) =>
 * Promise<result>` (a handler of `svc-webhooks/lambda` or your own), and the
 * source whose events it takes: each attempt reaches it as that source's
 * event, with a fresh `testLambdaContext()` on the delivery's `now`, and
 * its result is answered as that source answers it. A handler that throws,
 * or a result the source cannot send, is answered 502, as API Gateway and
 * ALBs answer a failed invocation; an HTTP API or Function URL answers a
 * result without a `statusCode` 200, with the result as its JSON body. A
 * handler that returns no Promise answers through its third argument, the
 * callback.
 */
export type LambdaDeliveryTarget = LambdaEventOptions &
  (
    | {
        /** The source: an HTTP API (the default) or a Function URL. */
        readonly format?: 'http' | 'function-url';
        /** The handler, given payload 2.0 events. */
        readonly lambda: (event: LambdaHttpApiEvent, context: TestLambdaContext, callback: (error?: unknown, result?: unknown) => void) => unknown;
      }
    | {
        /** The source: a REST API. */
        readonly format: 'rest';
        /** The handler, given payload 1.0 events. */
        readonly lambda: (event: LambdaRestEvent, context: TestLambdaContext, callback: (error?: unknown, result?: unknown) => void) => unknown;
      }
    | {
        /** The source: a load balancer. */
        readonly format: 'alb' | 'alb-multi-value';
        /** The handler, given ALB events. */
        readonly lambda: (event: LambdaAlbEvent, context: TestLambdaContext, callback: (error?: unknown, result?: unknown) => void) => unknown;
      }
  );

/**
 * An Azure Functions HTTP handler called in this process, `(request,
 * context) => Promise<HttpResponseInit>` (a handler of `svc-webhooks/azure`
 * or your own): each attempt reaches it as a `signedAzureRequest()` would,
 * at `url` with `params`, with a fresh `testAzureContext()` (logging to the
 * console), and its answer is sent as the Functions host sends it (`status`
 * absent is 200, `jsonBody` as JSON, nothing returned 204). A handler that
 * throws, or an answer that is no object, is answered 500.
 */
export interface AzureDeliveryTarget extends AzureRequestOptions {
  /** The handler. */
  readonly azure: (request: TestAzureRequest, context: TestAzureContext) => unknown;
}

/** `target` as a URL or a Fetch handler; throws `WebhookOptionsError` for what is none of the targets. */
export function asDeliveryTarget(target: DeliveryTarget | LambdaDeliveryTarget | AzureDeliveryTarget, now: () => number): DeliveryTarget {
  if (typeof target === 'string' || typeof target === 'function') return target;
  if (typeof target === 'object' && target !== null && 'lambda' in target) {
    checkCallback('lambda', target.lambda);
    checkLambdaEventOptions(target);
    return lambdaAsFetch(target, now);
  }
  if (typeof target === 'object' && target !== null && 'azure' in target) {
    checkCallback('azure', target.azure);
    checkAzureRequestOptions(target);
    return azureAsFetch(target);
  }
  throw new WebhookOptionsError('svc-webhooks: simulateDelivery delivers to a URL, a Fetch handler, { lambda: handler } or { azure: handler }');
}

type AnyLambdaHandler = (event: never, context: TestLambdaContext, callback: (error?: unknown, result?: unknown) => void) => unknown;

function lambdaAsFetch(target: LambdaDeliveryTarget, now: () => number): (request: Request) => Promise<Response> {
  const format = target.format ?? 'http';
  const handler = target.lambda as AnyLambdaHandler;
  return async (request) => {
    const event = lambdaEventOf(await request.text(), Object.fromEntries(request.headers), target, now());
    try {
      return lambdaAnswer(await invoked(handler, event as never, testLambdaContext({ now })), format);
    } catch {
      return FAILED_INVOCATION();
    }
  };
}

/** The handler's result: by its Promise, or by its callback when it returns none. */
function invoked(handler: AnyLambdaHandler, event: never, context: TestLambdaContext): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const returned = handler(event, context, (error, result) => (error === undefined || error === null ? resolve(result) : reject(error)));
    if (typeof (returned as PromiseLike<unknown> | undefined)?.then === 'function') (returned as PromiseLike<unknown>).then(resolve, reject);
  });
}

/** What API Gateway and ALBs answer for a function that failed, or a result they cannot send. */
const FAILED_INVOCATION = (): Response => Response.json({ message: 'Internal server error' }, { status: 502 });

/** Statuses whose answer has no body. */
const NULL_BODY = new Set([204, 205, 304]);

/**
 * The HTTP answer `format`'s source sends for `result`: REST APIs merge
 * `headers` and `multiValueHeaders`, an ALB takes the one its mode uses, an
 * HTTP API and a Function URL take `headers` and `cookies`, and infer 200
 * and a JSON body for a result without a `statusCode`.
 */
export function lambdaAnswer(result: unknown, format: LambdaEventFormat): Response {
  const payload2 = format === 'http' || format === 'function-url';
  if (payload2 && (typeof result !== 'object' || result === null || !('statusCode' in result))) {
    return new Response(typeof result === 'string' ? result : (JSON.stringify(result) ?? ''), { headers: { 'content-type': 'application/json' } });
  }
  const { statusCode, headers, multiValueHeaders, body, isBase64Encoded, cookies } = (result ?? {}) as Readonly<Record<string, unknown>>;
  if (!Number.isInteger(statusCode) || (body !== undefined && body !== null && typeof body !== 'string')) return FAILED_INVOCATION();
  try {
    const sent = new Headers();
    if (format !== 'alb-multi-value') for (const [name, value] of entriesOf(headers)) sent.append(name, String(value));
    if (format === 'rest' || format === 'alb-multi-value') {
      for (const [name, values] of entriesOf(multiValueHeaders)) for (const value of Array.isArray(values) ? values : []) sent.append(name, String(value));
    }
    if (payload2 && Array.isArray(cookies)) for (const cookie of cookies) sent.append('set-cookie', String(cookie));
    const bytes = NULL_BODY.has(statusCode as number) || !body ? null : isBase64Encoded === true ? Buffer.from(body, 'base64') : body;
    return new Response(bytes, { status: statusCode as number, headers: sent });
  } catch {
    // A header name or value HTTP cannot carry, or a status outside 200 to 599.
    return FAILED_INVOCATION();
  }
}

function entriesOf(record: unknown): Array<[string, unknown]> {
  return typeof record === 'object' && record !== null ? Object.entries(record) : [];
}

function azureAsFetch(target: AzureDeliveryTarget): (request: Request) => Promise<Response> {
  const { azure: handler, url = 'https://receiver.test/api/webhooks', params } = target;
  return async (request) => {
    const body = await request.text();
    const sent = new Request(url, { method: 'POST', body, headers: withLength(Object.fromEntries(request.headers), body) });
    try {
      return azureAnswer(await handler(azureRequestOf(sent, params), testAzureContext()));
    } catch {
      return new Response(null, { status: 500 });
    }
  };
}

/**
 * The HTTP answer the Functions host sends for `answer`, as `@azure/functions`'
 * `HttpResponse` makes it: `status` absent is 200, `jsonBody` is sent as JSON
 * (with its content type unless one is given), a status without a body sends
 * none, and nothing returned is 204. Throws for an answer that is no object.
 */
export function azureAnswer(answer: unknown): Response {
  if (answer === undefined || answer === null) return new Response(null, { status: 204 });
  if (typeof answer !== 'object') throw new TypeError('the HTTP answer must be an object');
  const { status = 200, headers, body, jsonBody } = answer as {
    status?: number;
    headers?: ConstructorParameters<typeof Headers>[0];
    body?: ConstructorParameters<typeof Response>[0];
    jsonBody?: unknown;
  };
  const sent = new Headers(headers);
  if (NULL_BODY.has(status)) return new Response(null, { status, headers: sent });
  if (jsonBody === undefined) return new Response(body, { status, headers: sent });
  if (!sent.has('content-type')) sent.set('content-type', 'application/json');
  return new Response(JSON.stringify(jsonBody), { status, headers: sent });
}
