/**
 * Lambda events of AWS's HTTP sources, shaped as AWS sends them and carrying
 * a signed request: API Gateway REST APIs (payload 1.0), HTTP APIs and
 * Function URLs (2.0), Application Load Balancers (with or without
 * multi-value headers). The shapes are written out here, structurally, so
 * that the kit needs no `@types/aws-lambda`; each is assignable to its type
 * there.
 */
import { Buffer } from 'node:buffer';
import { randomBytes, randomUUID } from 'node:crypto';
import type { WebhookEvent } from '../core/event.js';
import { checkPolicy } from '../base/option-checks.js';
import { WebhookOptionsError } from '../base/options-error.js';
import { bodyOf, signedHeaders, type SignedHeadersOptions } from './signed-request.js';

/**
 * The HTTP source a Lambda event comes from, each with its own shape:
 * `'rest'`, an API Gateway REST API (payload 1.0, `multiValueHeaders` beside
 * `headers`, header names in the case they were sent); `'http'`, an API
 * Gateway HTTP API (payload 2.0, names in lower case); `'function-url'`, a
 * Function URL (the 2.0 shape); `'alb'`, an Application Load Balancer;
 * `'alb-multi-value'`, one whose target group enables multi-value headers
 * (`multiValueHeaders` alone, and the function must answer with them).
 */
export type LambdaEventFormat = 'rest' | 'http' | 'function-url' | 'alb' | 'alb-multi-value';

/** The formats, for checking a caller's. */
export const LAMBDA_EVENT_FORMATS: readonly LambdaEventFormat[] = ['rest', 'http', 'function-url', 'alb', 'alb-multi-value'];

/** An API Gateway REST API's event (payload 1.0), as `@types/aws-lambda`'s `APIGatewayProxyEvent` describes it. */
export interface LambdaRestEvent {
  /** The resource path of the route, `/webhooks` or `/webhooks/{tenant}`. */
  resource: string;
  /** The request's path. */
  path: string;
  /** `POST`. */
  httpMethod: string;
  /** The last value of each header, by its name in the case it was sent. */
  headers: Record<string, string | undefined>;
  /** Every value of each header, by its name in the case it was sent: what the Lambda entry reads. */
  multiValueHeaders: Record<string, string[] | undefined>;
  /** The query's parameters, `null` for none. */
  queryStringParameters: Record<string, string | undefined> | null;
  /** Every value of the query's parameters, `null` for none. */
  multiValueQueryStringParameters: Record<string, string[] | undefined> | null;
  /** The route's path parameters, `null` for none. */
  pathParameters: Record<string, string | undefined> | null;
  /** The stage's variables, `null` for none. */
  stageVariables: Record<string, string | undefined> | null;
  /** Where and when the request came in. */
  requestContext: {
    /** The AWS account. */
    accountId: string;
    /** The API's id. */
    apiId: string;
    /** What an authorizer found: `null`, none runs. */
    authorizer: null;
    /** The API's domain name. */
    domainName: string;
    /** The first label of the domain name. */
    domainPrefix: string;
    /** The request's extended id. */
    extendedRequestId: string;
    /** `POST`. */
    httpMethod: string;
    /** Who sent it: an anonymous caller at `sourceIp`. */
    identity: {
      /** `null`: no IAM caller. */
      accessKey: string | null;
      /** `null`: no IAM caller. */
      accountId: string | null;
      /** `null`: no API key. */
      apiKey: string | null;
      /** `null`: no API key. */
      apiKeyId: string | null;
      /** `null`: no IAM caller. */
      caller: string | null;
      /** `null`: no client certificate. */
      clientCert: null;
      /** `null`: no Cognito identity. */
      cognitoAuthenticationProvider: string | null;
      /** `null`: no Cognito identity. */
      cognitoAuthenticationType: string | null;
      /** `null`: no Cognito identity. */
      cognitoIdentityId: string | null;
      /** `null`: no Cognito identity. */
      cognitoIdentityPoolId: string | null;
      /** `null`: no IAM caller. */
      principalOrgId: string | null;
      /** The sender's address. */
      sourceIp: string;
      /** `null`: no IAM caller. */
      user: string | null;
      /** The sender's `User-Agent`. */
      userAgent: string | null;
      /** `null`: no IAM caller. */
      userArn: string | null;
    };
    /** The path with the stage. */
    path: string;
    /** `HTTP/1.1`. */
    protocol: string;
    /** A fresh id for each event. */
    requestId: string;
    /** When it came in: `14/Nov/2023:22:13:20 +0000`. */
    requestTime: string;
    /** When it came in, in milliseconds since the Unix epoch. */
    requestTimeEpoch: number;
    /** The resource's id. */
    resourceId: string;
    /** The resource path of the route. */
    resourcePath: string;
    /** The stage. */
    stage: string;
  };
  /** The body: as sent, or base64 when `isBase64Encoded`. */
  body: string | null;
  /** Whether `body` is base64. */
  isBase64Encoded: boolean;
}

/**
 * An API Gateway HTTP API's event (payload 2.0), which a Function URL sends
 * too, as `@types/aws-lambda`'s `APIGatewayProxyEventV2` describes it.
 */
export interface LambdaHttpApiEvent {
  /** `2.0`. */
  version: string;
  /** The route: `POST /webhooks`, or `$default` for a Function URL. */
  routeKey: string;
  /** The request's path. */
  rawPath: string;
  /** The query, without its `?`. */
  rawQueryString: string;
  /** Each header by its name in lower case, repeated values joined with commas. */
  headers: Record<string, string | undefined>;
  /** The route's path parameters, where it has any (never for a Function URL). */
  pathParameters?: Record<string, string | undefined>;
  /** Where and when the request came in. */
  requestContext: {
    /** The AWS account (`anonymous` for a Function URL). */
    accountId: string;
    /** The API's id, or the Function URL's. */
    apiId: string;
    /** The domain name. */
    domainName: string;
    /** The first label of the domain name. */
    domainPrefix: string;
    /** The request line and the sender. */
    http: {
      /** `POST`. */
      method: string;
      /** The request's path. */
      path: string;
      /** `HTTP/1.1`. */
      protocol: string;
      /** The sender's address. */
      sourceIp: string;
      /** The sender's `User-Agent`. */
      userAgent: string;
    };
    /** A fresh id for each event. */
    requestId: string;
    /** The route. */
    routeKey: string;
    /** `$default`. */
    stage: string;
    /** When it came in: `14/Nov/2023:22:13:20 +0000`. */
    time: string;
    /** When it came in, in milliseconds since the Unix epoch. */
    timeEpoch: number;
  };
  /** The body: as sent, or base64 when `isBase64Encoded`. */
  body?: string;
  /** Whether `body` is base64. */
  isBase64Encoded: boolean;
}

/** An Application Load Balancer's event, as `@types/aws-lambda`'s `ALBEvent` describes it. */
export interface LambdaAlbEvent {
  /** The target group. */
  requestContext: {
    /** The target group. */
    elb: {
      /** The target group's ARN. */
      targetGroupArn: string;
    };
  };
  /** `POST`. */
  httpMethod: string;
  /** The request's path. */
  path: string;
  /** The query's parameters, without multi-value headers. */
  queryStringParameters?: Record<string, string | undefined>;
  /** Each header by its name in lower case, without multi-value headers. */
  headers?: Record<string, string | undefined>;
  /** Every value of the query's parameters, with multi-value headers. */
  multiValueQueryStringParameters?: Record<string, string[] | undefined>;
  /** Every value of each header by its name in lower case, with multi-value headers. */
  multiValueHeaders?: Record<string, string[] | undefined>;
  /** The body: as sent, or base64 when `isBase64Encoded`. */
  body: string | null;
  /** Whether `body` is base64. */
  isBase64Encoded: boolean;
}

/** Options of `signedLambdaEvent()`: those of `signedHeaders()`, and how the event carries the request. */
export interface SignedLambdaEventOptions extends SignedHeadersOptions, LambdaEventOptions {}

/** How a Lambda event carries a request: which source sends it, and how. */
export interface LambdaEventOptions {
  /**
   * The source the event comes from: `'rest'`, `'http'`, `'function-url'`,
   * `'alb'` or `'alb-multi-value'` ({@link LambdaEventFormat}).
   * @default 'http'
   */
  readonly format?: LambdaEventFormat;
  /**
   * Sends the body base64-encoded, with `isBase64Encoded: true`, as API
   * Gateway does for a binary media type and a Function URL or an ALB for a
   * body that is no text.
   * @default false
   */
  readonly base64?: boolean;
  /**
   * The request's path.
   * @default '/webhooks'
   */
  readonly path?: string;
  /**
   * The route's path parameters, what `tenants.of` reads a tenant from
   * (`{ tenant: 'acme' }` for `/webhooks/{tenant}`). REST and HTTP API events
   * only: a Function URL or an ALB has no routes.
   * @default none (`null` in a REST event, absent in an HTTP API event)
   */
  readonly pathParameters?: Readonly<Record<string, string>>;
}

/**
 * The Lambda event an API Gateway REST API hands a function for a POST of
 * `event` (sent as compact JSON) or of `body` as it is, signed as the
 * service signs it.
 * @example
 * ```ts
 * import { verifyWebhook } from 'svc-webhooks/lambda';
 * import { signedLambdaEvent, testEvent, testLambdaContext } from 'svc-webhooks/testing';
 *
 * const handler = verifyWebhook({ secret: 'whsec_c2VjcmV0LWZvci10ZXN0cw==' }, async () => {});
 * const event = signedLambdaEvent(testEvent('call.missed'), { secret: 'whsec_c2VjcmV0LWZvci10ZXN0cw==', format: 'rest' });
 * const result = await handler(event, testLambdaContext()); // { statusCode: 204, ... }
 * ```
 */
export function signedLambdaEvent(eventOrBody: WebhookEvent | string, options: SignedLambdaEventOptions & { readonly format: 'rest' }): LambdaRestEvent;
/**
 * The Lambda event an Application Load Balancer hands a function for a POST
 * of `event` (sent as compact JSON) or of `body` as it is, signed as the
 * service signs it: its headers in `multiValueHeaders` for
 * `'alb-multi-value'`, else in `headers`.
 * @example
 * ```ts
 * import { signedLambdaEvent, testEvent } from 'svc-webhooks/testing';
 *
 * const event = signedLambdaEvent(testEvent('call.missed'), { secret: 'whsec_c2VjcmV0LWZvci10ZXN0cw==', format: 'alb-multi-value' });
 * event.multiValueHeaders?.['webhook-id']; // [the event's id]
 * ```
 */
export function signedLambdaEvent(eventOrBody: WebhookEvent | string, options: SignedLambdaEventOptions & { readonly format: 'alb' | 'alb-multi-value' }): LambdaAlbEvent;
/**
 * The Lambda event an API Gateway HTTP API (or, with `format:
 * 'function-url'`, a Function URL) hands a function for a POST of `event`
 * (sent as compact JSON) or of `body` as it is, signed as the service signs
 * it.
 * @example
 * ```ts
 * import { verifyWebhook } from 'svc-webhooks/lambda';
 * import { signedLambdaEvent, testEvent, testLambdaContext } from 'svc-webhooks/testing';
 *
 * const secret = 'whsec_c2VjcmV0LWZvci10ZXN0cw==';
 * const handler = verifyWebhook({ secret }, async () => {});
 * const event = signedLambdaEvent(testEvent('call.missed'), { secret, base64: true });
 * const result = await handler(event, testLambdaContext()); // { statusCode: 204, ... }
 * // A body changed after signing is refused: 400 invalid_signature.
 * const tampered = signedLambdaEvent(testEvent('call.missed'), { secret });
 * await handler({ ...tampered, body: tampered.body!.replace('call_', 'call_X') }, testLambdaContext());
 * ```
 */
export function signedLambdaEvent(eventOrBody: WebhookEvent | string, options: SignedLambdaEventOptions & { readonly format?: 'http' | 'function-url' }): LambdaHttpApiEvent;
/**
 * The Lambda event of `options.format` for a POST of `event` (sent as
 * compact JSON) or of `body` as it is, signed as the service signs it.
 * @example
 * ```ts
 * import { signedLambdaEvent, testEvent, type LambdaEventFormat } from 'svc-webhooks/testing';
 *
 * for (const format of ['rest', 'http', 'function-url', 'alb', 'alb-multi-value'] satisfies LambdaEventFormat[]) {
 *   signedLambdaEvent(testEvent('call.missed'), { secret: 'whsec_c2VjcmV0LWZvci10ZXN0cw==', format });
 * }
 * ```
 */
export function signedLambdaEvent(eventOrBody: WebhookEvent | string, options: SignedLambdaEventOptions): LambdaRestEvent | LambdaHttpApiEvent | LambdaAlbEvent;
/** Throws `WebhookOptionsError` for an unknown format, or path parameters on a source without routes. */
export function signedLambdaEvent(eventOrBody: WebhookEvent | string, options: SignedLambdaEventOptions): LambdaRestEvent | LambdaHttpApiEvent | LambdaAlbEvent {
  checkLambdaEventOptions(options);
  const body = bodyOf(eventOrBody);
  const timestamp = options.timestamp ?? new Date();
  const nowMs = timestamp instanceof Date ? timestamp.getTime() : timestamp * 1000;
  return lambdaEventOf(body, signedHeaders(body, { ...options, timestamp }), options, nowMs);
}

/** Throws `WebhookOptionsError` for options no source could send. */
export function checkLambdaEventOptions(options: LambdaEventOptions): void {
  const format = checkPolicy('format', options.format, LAMBDA_EVENT_FORMATS);
  if (options.pathParameters !== undefined && (format === 'function-url' || format === 'alb' || format === 'alb-multi-value')) {
    throw new WebhookOptionsError(`svc-webhooks: pathParameters: a ${format === 'function-url' ? 'Function URL' : 'load balancer'} has no routes, so its events have none`);
  }
  if (options.path !== undefined && (typeof options.path !== 'string' || !options.path.startsWith('/'))) {
    throw new WebhookOptionsError("svc-webhooks: path must be a string starting with '/'");
  }
}

/**
 * The event of `options.format` carrying `body` and `headers` (names in any
 * case) as the source passes them, received at `nowMs`: the source's own
 * headers (`host`, `x-forwarded-for`, …) first, then the request's and its
 * `content-length`.
 */
export function lambdaEventOf(
  body: string,
  headers: Readonly<Record<string, string>>,
  options: LambdaEventOptions,
  nowMs: number,
): LambdaRestEvent | LambdaHttpApiEvent | LambdaAlbEvent {
  const { format = 'http', base64 = false, path = '/webhooks', pathParameters } = options;
  const sent: Record<string, string> = { ...SOURCE_HEADERS[format] };
  for (const [name, value] of Object.entries({ ...headers, 'content-length': String(Buffer.byteLength(body)) })) sent[name.toLowerCase()] = value;
  const carried: Carried = {
    path,
    body: base64 ? Buffer.from(body).toString('base64') : body,
    isBase64Encoded: base64,
    atMs: nowMs,
    at: requestTime(nowMs),
    ...(pathParameters !== undefined && { pathParameters: { ...pathParameters } }),
  };
  switch (format) {
    case 'rest':
      return restEvent(byName(sent, titleCase), carried);
    case 'http':
    case 'function-url':
      return httpApiEvent(format, sent, carried);
    case 'alb':
    case 'alb-multi-value':
      return albEvent(format, sent, carried);
  }
}

const SOURCE_IP = '203.0.113.10';
const USER_AGENT = 'svc-webhooks-sender/1.0';

/** What a source adds to each request: the names in lower case (a REST event title-cases them). */
const SOURCE_HEADERS: Readonly<Record<LambdaEventFormat, Readonly<Record<string, string>>>> = {
  rest: sourceHeaders('a1b2c3d4e5.execute-api.us-east-1.amazonaws.com', '2b6c1d0e3f4a5b6c7d8e9f01'),
  http: sourceHeaders('r3pmxmplak.execute-api.us-east-1.amazonaws.com', '3c7d2e1f4a5b6c7d8e9f0a12'),
  'function-url': sourceHeaders('abcdefghijklmnopqrstuvwxyz012345.lambda-url.us-east-1.on.aws', '4d8e3f2a5b6c7d8e9f0a1b23'),
  alb: sourceHeaders('webhooks-123456789.us-east-1.elb.amazonaws.com', '5e9f4a3b6c7d8e9f0a1b2c34'),
  'alb-multi-value': sourceHeaders('webhooks-123456789.us-east-1.elb.amazonaws.com', '5e9f4a3b6c7d8e9f0a1b2c34'),
};

function sourceHeaders(host: string, trace: string): Readonly<Record<string, string>> {
  return {
    accept: '*/*',
    host,
    'user-agent': USER_AGENT,
    'x-amzn-trace-id': `Root=1-6553f1a0-${trace}`,
    'x-forwarded-for': SOURCE_IP,
    'x-forwarded-port': '443',
    'x-forwarded-proto': 'https',
  };
}

/** `Webhook-Id` for `webhook-id`: a REST API passes names in the case they were sent, and a sender over HTTP/1.1 may capitalize them. */
function titleCase(name: string): string {
  return name.replace(/(^|-)([a-z])/g, (_match, dash: string, letter: string) => dash + letter.toUpperCase());
}

function byName(headers: Readonly<Record<string, string>>, rename: (name: string) => string): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [rename(name), value]));
}

function listed(headers: Readonly<Record<string, string>>): Record<string, string[]> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, [value]]));
}

/** A source's time of a request: `14/Nov/2023:22:13:20 +0000`. */
function requestTime(ms: number): string {
  const [, day, month, year, time] = /(\d\d) (\w+) (\d+) ([\d:]+) GMT/.exec(new Date(ms).toUTCString())!;
  return `${day}/${month}/${year}:${time} +0000`;
}

/** What every source's event carries of the request besides its headers. */
interface Carried {
  readonly path: string;
  /** As the event holds it: base64 when `isBase64Encoded`. */
  readonly body: string;
  readonly isBase64Encoded: boolean;
  /** When it came in, in milliseconds and as a source writes it. */
  readonly atMs: number;
  readonly at: string;
  readonly pathParameters?: Record<string, string>;
}

function restEvent(headers: Record<string, string>, { path, body, isBase64Encoded, atMs, at, pathParameters }: Carried): LambdaRestEvent {
  return {
    resource: path,
    path,
    httpMethod: 'POST',
    headers,
    multiValueHeaders: listed(headers),
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    pathParameters: pathParameters ?? null,
    stageVariables: null,
    requestContext: {
      resourceId: '2gxmpl',
      resourcePath: path,
      httpMethod: 'POST',
      extendedRequestId: randomBytes(11).toString('base64'),
      requestTime: at,
      path: `/prod${path}`,
      accountId: '123456789012',
      protocol: 'HTTP/1.1',
      stage: 'prod',
      domainPrefix: 'a1b2c3d4e5',
      requestTimeEpoch: atMs,
      requestId: randomUUID(),
      authorizer: null,
      identity: {
        cognitoIdentityPoolId: null,
        accountId: null,
        cognitoIdentityId: null,
        caller: null,
        apiKey: null,
        apiKeyId: null,
        clientCert: null,
        sourceIp: SOURCE_IP,
        principalOrgId: null,
        accessKey: null,
        cognitoAuthenticationType: null,
        cognitoAuthenticationProvider: null,
        userArn: null,
        userAgent: headers['User-Agent']!,
        user: null,
      },
      domainName: 'a1b2c3d4e5.execute-api.us-east-1.amazonaws.com',
      apiId: 'a1b2c3d4e5',
    },
    body,
    isBase64Encoded,
  };
}

function httpApiEvent(format: 'http' | 'function-url', headers: Record<string, string>, { path, body, isBase64Encoded, atMs, at, pathParameters }: Carried): LambdaHttpApiEvent {
  const functionUrl = format === 'function-url';
  const domainPrefix = functionUrl ? 'abcdefghijklmnopqrstuvwxyz012345' : 'r3pmxmplak';
  const routeKey = functionUrl ? '$default' : `POST ${path}`;
  return {
    version: '2.0',
    routeKey,
    rawPath: path,
    rawQueryString: '',
    headers,
    ...(pathParameters !== undefined && { pathParameters }),
    requestContext: {
      accountId: functionUrl ? 'anonymous' : '123456789012',
      apiId: domainPrefix,
      domainName: functionUrl ? `${domainPrefix}.lambda-url.us-east-1.on.aws` : `${domainPrefix}.execute-api.us-east-1.amazonaws.com`,
      domainPrefix,
      http: { method: 'POST', path, protocol: 'HTTP/1.1', sourceIp: SOURCE_IP, userAgent: headers['user-agent']! },
      requestId: functionUrl ? randomUUID() : randomBytes(11).toString('base64'),
      routeKey,
      stage: '$default',
      time: at,
      timeEpoch: atMs,
    },
    body,
    isBase64Encoded,
  };
}

function albEvent(format: 'alb' | 'alb-multi-value', headers: Record<string, string>, { path, body, isBase64Encoded }: Carried): LambdaAlbEvent {
  const multiValue = format === 'alb-multi-value';
  return {
    requestContext: { elb: { targetGroupArn: 'arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/webhooks/6d0ecf831eec9f09' } },
    httpMethod: 'POST',
    path,
    ...(multiValue ? { multiValueQueryStringParameters: {}, multiValueHeaders: listed(headers) } : { queryStringParameters: {}, headers }),
    body,
    isBase64Encoded,
  };
}
