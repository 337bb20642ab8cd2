/**
 * Lambda events of each HTTP source, from the AWS-shaped samples in
 * fixtures/lambda/, carrying a signed request the way that source passes it.
 */
import { Buffer } from 'node:buffer';
import { readFileSync } from 'node:fs';
import type { Context } from 'aws-lambda';
import type { LambdaWebhookEvent, LambdaWebhookResult } from '../../adapters/lambda.js';
import type { SignedRequest } from './signed-request.js';

export const LAMBDA_SOURCES = ['api-gateway-rest', 'http-api', 'function-url', 'alb', 'alb-multi-value'] as const;
export type LambdaSource = (typeof LAMBDA_SOURCES)[number];

const templates = new Map<LambdaSource, string>(
  LAMBDA_SOURCES.map((source) => [source, readFileSync(new URL(`../../fixtures/lambda/${source}.json`, import.meta.url), 'utf8')]),
);

/** `Webhook-Id` for `webhook-id`: a REST API passes header names in the case they were sent. */
const titleCase = (name: string): string => name.replace(/(^|-)([a-z])/g, (_match, dash: string, letter: string) => dash + letter.toUpperCase());

/** The sample event of `source` carrying `request`; `base64` sends the body base64-encoded, as for a binary type. */
export function lambdaEvent(source: LambdaSource, { body, headers }: SignedRequest, { base64 = false } = {}): LambdaWebhookEvent {
  const event = JSON.parse(templates.get(source)!) as Record<string, unknown> & {
    headers?: Record<string, string>;
    multiValueHeaders?: Record<string, string[]>;
  };
  const sent = { ...headers, 'content-length': String(Buffer.byteLength(body)) };
  for (const [name, value] of Object.entries(sent)) {
    if (source === 'api-gateway-rest') {
      event.headers![titleCase(name)] = value;
      event.multiValueHeaders![titleCase(name)] = [value];
    } else if (source === 'alb-multi-value') event.multiValueHeaders![name] = [value];
    else event.headers![name] = value;
  }
  event.body = base64 ? Buffer.from(body).toString('base64') : body;
  event.isBase64Encoded = base64;
  return event as unknown as LambdaWebhookEvent;
}

/** A Lambda invocation context as the runtime passes it. */
export const lambdaContext = {
  callbackWaitsForEmptyEventLoop: true,
  functionName: 'webhooks',
  functionVersion: '$LATEST',
  invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:webhooks',
  memoryLimitInMB: '128',
  awsRequestId: '8476a536-e9f4-11e8-9739-2dfe598c3fcd',
  logGroupName: '/aws/lambda/webhooks',
  logStreamName: '2023/11/14/[$LATEST]e3b0c44298fc1c149afbf4c8996fb924',
  getRemainingTimeInMillis: () => 30_000,
  done: () => undefined,
  fail: () => undefined,
  succeed: () => undefined,
} satisfies Context;

/** The HTTP response API Gateway or an ALB would send for `result`. */
export function httpResponseOf(result: LambdaWebhookResult): Response {
  const headers = new Headers();
  for (const [name, value] of Object.entries(result.headers ?? {})) headers.append(name, String(value));
  for (const [name, values] of Object.entries(('multiValueHeaders' in result && result.multiValueHeaders) || {})) {
    for (const value of values) headers.append(name, String(value));
  }
  const body = result.body ? (result.isBase64Encoded ? Buffer.from(result.body, 'base64') : result.body) : null;
  return new Response(body, { status: result.statusCode, headers });
}
