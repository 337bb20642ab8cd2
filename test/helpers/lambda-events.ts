/**
 * Lambda events of each HTTP source carrying a signed request the way that
 * source passes it, and the HTTP answer the source makes of a result: the
 * testing kit's, which test/testing/lambda-event.test.ts holds to the
 * AWS-shaped samples in fixtures/lambda/, on the tests' clock.
 */
import type { LambdaWebhookEvent } from '../../adapters/lambda.js';
import { lambdaAnswer } from '../../src/testing/in-process-targets.js';
import { testLambdaContext } from '../../src/testing/index.js';
import { lambdaEventOf, type LambdaEventFormat } from '../../src/testing/lambda-event.js';
import { now, type SignedRequest } from './signed-request.js';

export const LAMBDA_SOURCES = ['api-gateway-rest', 'http-api', 'function-url', 'alb', 'alb-multi-value'] as const;
export type LambdaSource = (typeof LAMBDA_SOURCES)[number];

/** The testing kit's format of each source. */
const FORMAT_OF: Readonly<Record<LambdaSource, LambdaEventFormat>> = {
  'api-gateway-rest': 'rest',
  'http-api': 'http',
  'function-url': 'function-url',
  alb: 'alb',
  'alb-multi-value': 'alb-multi-value',
};

/** The event of `source` carrying `request`; `base64` sends the body base64-encoded, as for a binary type. */
export function lambdaEvent(source: LambdaSource, { body, headers }: SignedRequest, { base64 = false } = {}): LambdaWebhookEvent {
  return lambdaEventOf(body, headers, { format: FORMAT_OF[source], base64 }, now());
}

/** A Lambda invocation context as the runtime passes it. */
export const lambdaContext = testLambdaContext({ awsRequestId: '8476a536-e9f4-11e8-9739-2dfe598c3fcd', timeoutMs: 30_000 });

/** The HTTP response `source` would send for a function's `result`. */
export function httpResponseOf(source: LambdaSource, result: unknown): Response {
  return lambdaAnswer(result, FORMAT_OF[source]);
}
