/**
 * The kit's Lambda events and context, and its Azure request and context,
 * are what the platforms' own types describe: a handler typed with
 * `@types/aws-lambda` or `@azure/functions` takes them, and simulateDelivery
 * takes such a handler for the format whose events it is typed for.
 */
import type { HttpRequest, HttpResponseInit, InvocationContext } from '@azure/functions';
import type { ALBEvent, ALBHandler, APIGatewayProxyEvent, APIGatewayProxyEventV2, APIGatewayProxyHandler, APIGatewayProxyHandlerV2, Context, LambdaFunctionURLEvent } from 'aws-lambda';
import { expectTypeOf, test } from 'vitest';
import { verifyWebhook as azureWebhook } from '../../adapters/azure.js';
import { verifyWebhook as lambdaWebhook } from '../../adapters/lambda.js';
import {
  signedAzureRequest,
  signedLambdaEvent,
  simulateDelivery,
  testAzureContext,
  testEvent,
  testLambdaContext,
  type LambdaEventFormat,
  type LambdaRestEvent,
} from '../../src/testing/index.js';

const secret = 'whsec_c2VjcmV0LWZvci10ZXN0cw==';
const event = testEvent('call.missed');

test("each Lambda event is assignable to its @types/aws-lambda type, and the context to Context", () => {
  expectTypeOf(signedLambdaEvent(event, { secret, format: 'rest' })).toExtend<APIGatewayProxyEvent>();
  expectTypeOf(signedLambdaEvent(event, { secret })).toExtend<APIGatewayProxyEventV2>();
  expectTypeOf(signedLambdaEvent(event, { secret, format: 'http' })).toExtend<APIGatewayProxyEventV2>();
  expectTypeOf(signedLambdaEvent(event, { secret, format: 'function-url' })).toExtend<LambdaFunctionURLEvent>();
  expectTypeOf(signedLambdaEvent(event, { secret, format: 'alb' })).toExtend<ALBEvent>();
  expectTypeOf(signedLambdaEvent(event, { secret, format: 'alb-multi-value' })).toExtend<ALBEvent>();
  expectTypeOf(testLambdaContext()).toExtend<Context>();
  const format = 'rest' as LambdaEventFormat;
  expectTypeOf(signedLambdaEvent(event, { secret, format })).toExtend<APIGatewayProxyEvent | APIGatewayProxyEventV2 | ALBEvent>();
  // @ts-expect-error a REST event is no HTTP API event
  expectTypeOf(signedLambdaEvent(event, { secret, format: 'rest' })).toExtend<APIGatewayProxyEventV2>();
});

test('the Azure request and context are assignable to HttpRequest and InvocationContext', () => {
  expectTypeOf(signedAzureRequest(event, { secret })).toExtend<HttpRequest>();
  expectTypeOf(testAzureContext()).toExtend<InvocationContext>();
});

test("the entries' handlers take them without a cast", () => {
  const lambda = lambdaWebhook({ secret }, () => undefined);
  void lambda(signedLambdaEvent(event, { secret, format: 'rest' }), testLambdaContext());
  void lambda(signedLambdaEvent(event, { secret, format: 'alb' }), testLambdaContext());
  const azure = azureWebhook({ secret }, () => undefined);
  void azure(signedAzureRequest(event, { secret }), testAzureContext());
});

test('simulateDelivery takes a Lambda handler for the format its events are typed for, and an Azure handler', () => {
  const options = { secret };
  void simulateDelivery({ lambda: lambdaWebhook({ secret }, () => undefined), format: 'alb-multi-value' }, event, options);
  void simulateDelivery({ lambda: (async () => ({ statusCode: 204, body: '' })) as APIGatewayProxyHandler, format: 'rest' }, event, options);
  void simulateDelivery({ lambda: (async () => ({ statusCode: 204 })) as APIGatewayProxyHandlerV2 }, event, options);
  void simulateDelivery({ lambda: (async () => ({ statusCode: 204 })) as ALBHandler, format: 'alb' }, event, options);
  void simulateDelivery({ lambda: async (rest: LambdaRestEvent) => ({ statusCode: rest.multiValueHeaders ? 204 : 500 }), format: 'rest' }, event, options);
  // @ts-expect-error a handler of REST events is given HTTP API events by default
  void simulateDelivery({ lambda: (async () => ({ statusCode: 204, body: '' })) as APIGatewayProxyHandler }, event, options);
  // @ts-expect-error a handler of HTTP API events is given no ALB events
  void simulateDelivery({ lambda: (async () => ({ statusCode: 204 })) as APIGatewayProxyHandlerV2, format: 'alb' }, event, options);
  void simulateDelivery({ azure: azureWebhook({ secret }, () => undefined), params: { tenant: 'acme' } }, event, options);
  // Inline handlers get their parameters' types from the format, the HTTP API's by default.
  void simulateDelivery({ lambda: async (http, context) => ({ statusCode: http.rawPath && context.awsRequestId ? 204 : 500 }) }, event, options);
  void simulateDelivery({ lambda: (http, _context, callback) => callback(null, { statusCode: http.version ? 204 : 500 }) }, event, options);
  void simulateDelivery({ format: 'rest', lambda: async (rest) => ({ statusCode: rest.multiValueHeaders ? 204 : 500 }) }, event, options);
  void simulateDelivery({ format: 'alb-multi-value', lambda: async (alb) => ({ statusCode: alb.requestContext.elb ? 204 : 500 }) }, event, options);
  void simulateDelivery({ azure: async (request, context) => ({ status: request.params.tenant ? 204 : context.invocationId.length }) }, event, options);
  void simulateDelivery({ azure: async (request: HttpRequest, context: InvocationContext): Promise<HttpResponseInit> => ({ status: request.params.x ? 204 : context.invocationId.length }) }, event, options);
});
