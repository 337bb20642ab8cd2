/**
 * signedLambdaEvent: each source's event is the AWS-shaped sample of
 * fixtures/lambda/ with the signed request in it, its header names in the
 * case that source passes them, and the Lambda entry verifies it, body
 * base64-encoded or not.
 */
import { Buffer } from 'node:buffer';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { verifyWebhook, type LambdaWebhookContext } from '../../adapters/lambda.js';
import { WebhookOptionsError } from '../../src/base/options-error.js';
import { signedLambdaEvent, testLambdaContext, type LambdaEventFormat } from '../../src/testing/index.js';
import { envelope, NOW_SECONDS, now, SECRET, signedRequest } from '../helpers/signed-request.js';

const FIXTURE: Readonly<Record<LambdaEventFormat, string>> = {
  rest: 'api-gateway-rest',
  http: 'http-api',
  'function-url': 'function-url',
  alb: 'alb',
  'alb-multi-value': 'alb-multi-value',
};
const FORMATS = Object.keys(FIXTURE) as LambdaEventFormat[];
const { body, headers } = signedRequest();

const sample = (format: LambdaEventFormat): Record<string, any> =>
  JSON.parse(readFileSync(new URL(`../../fixtures/lambda/${FIXTURE[format]}.json`, import.meta.url), 'utf8'));

/** The request's headers as `format` names them: a REST API as sent (here capitalized), the others in lower case. */
function namedAs(format: LambdaEventFormat, headers: Readonly<Record<string, string>>): Record<string, string> {
  const names: Record<string, string> = {
    'content-type': 'Content-Type',
    'content-length': 'Content-Length',
    'webhook-id': 'Webhook-Id',
    'webhook-timestamp': 'Webhook-Timestamp',
    'webhook-signature': 'Webhook-Signature',
  };
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [format === 'rest' ? names[name]! : name, value]));
}

/** The fixture of `format` carrying `body` with `headers`, as AWS would send it. */
function expectedEvent(format: LambdaEventFormat, body: string, headers: Readonly<Record<string, string>>): Record<string, any> {
  const event = sample(format);
  const sent = namedAs(format, { ...headers, 'content-length': String(Buffer.byteLength(body)) });
  if (format === 'alb-multi-value') Object.assign(event.multiValueHeaders, Object.fromEntries(Object.entries(sent).map(([name, value]) => [name, [value]])));
  else Object.assign(event.headers, sent);
  if (format === 'rest') Object.assign(event.multiValueHeaders, Object.fromEntries(Object.entries(sent).map(([name, value]) => [name, [value]])));
  // Fresh for each event.
  if (event.requestContext.requestId !== undefined) event.requestContext.requestId = expect.any(String);
  if (event.requestContext.extendedRequestId !== undefined) event.requestContext.extendedRequestId = expect.any(String);
  return { ...event, body, isBase64Encoded: false };
}

describe('signedLambdaEvent', () => {

  it.each(FORMATS)('makes the %s event of the AWS sample, the signed request in it under the names that source gives', (format) => {
    const event = signedLambdaEvent(body, { secret: SECRET, timestamp: NOW_SECONDS, format }) as unknown as Record<string, any>;
    const expected = expectedEvent(format, body, headers);
    expect(event).toMatchObject(expected);
    // Exactly the sample's headers and the request's: none missing, none in another case.
    for (const field of ['headers', 'multiValueHeaders'] as const) {
      expect(Object.keys(event[field] ?? {}).sort()).toEqual(Object.keys(expected[field] ?? {}).sort());
    }
    expect(event.isBase64Encoded).toBe(false);
  });

  it('gives each event a request id of its own, and stamps it at the signing time', () => {
    const [first, second] = [1, 2].map(() => signedLambdaEvent(body, { secret: SECRET, timestamp: new Date(now() + 999), format: 'rest' }));
    expect(first!.requestContext.requestId).not.toBe(second!.requestContext.requestId);
    expect([first!.requestContext.requestTimeEpoch, first!.requestContext.requestTime]).toEqual([now() + 999, '14/Nov/2023:22:13:20 +0000']);
  });

  it.each(FORMATS)('sends the body of a %s event base64-encoded, with a boolean isBase64Encoded, when asked', (format) => {
    const event = signedLambdaEvent(body, { secret: SECRET, format, base64: true });
    expect(event.isBase64Encoded).toBe(true);
    expect(Buffer.from(event.body!, 'base64').toString('utf8')).toBe(body);
  });

  it('signs an event given as an object as its compact JSON, under its id, now by default', () => {
    const event = JSON.parse(envelope('evt_given', 'call.missed'));
    const signed = signedLambdaEvent(event, { secret: SECRET });
    expect(signed.body).toBe(JSON.stringify(event));
    expect(signed.headers['webhook-id']).toBe('evt_given');
    expect(Math.abs(Number(signed.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(60);
  });

  it('puts the path and the path parameters where a REST API and an HTTP API put them', () => {
    const rest = signedLambdaEvent(body, { secret: SECRET, format: 'rest', path: '/webhooks/acme', pathParameters: { tenant: 'acme' } });
    expect([rest.path, rest.requestContext.path, rest.pathParameters]).toEqual(['/webhooks/acme', '/prod/webhooks/acme', { tenant: 'acme' }]);
    const http = signedLambdaEvent(body, { secret: SECRET, path: '/webhooks/acme', pathParameters: { tenant: 'acme' } });
    expect([http.rawPath, http.requestContext.http.path, http.pathParameters]).toEqual(['/webhooks/acme', '/webhooks/acme', { tenant: 'acme' }]);
    expect(signedLambdaEvent(body, { secret: SECRET, format: 'alb', path: '/hooks' }).path).toBe('/hooks');
    expect(signedLambdaEvent(body, { secret: SECRET })).not.toHaveProperty('pathParameters');
  });

  it.each([
    [{ format: 'soap' }, "svc-webhooks: format must be 'rest' or 'http' or 'function-url' or 'alb' or 'alb-multi-value'"],
    [{ format: 'alb', pathParameters: { tenant: 'acme' } }, 'svc-webhooks: pathParameters: a load balancer has no routes, so its events have none'],
    [{ format: 'function-url', pathParameters: { tenant: 'acme' } }, 'svc-webhooks: pathParameters: a Function URL has no routes, so its events have none'],
    [{ format: 'alb-multi-value', pathParameters: { tenant: 'acme' } }, 'svc-webhooks: pathParameters: a load balancer has no routes, so its events have none'],
    [{ path: 'webhooks' }, "svc-webhooks: path must be a string starting with '/'"],
    [{ path: 5 }, "svc-webhooks: path must be a string starting with '/'"],
  ])('refuses %j', (options, message) => {
    expect(() => signedLambdaEvent(body, { secret: SECRET, ...options } as never)).toThrow(new WebhookOptionsError(message));
  });
});

describe("the Lambda entry on the kit's events", () => {
  it.each(FORMATS.flatMap((format) => [false, true].map((base64) => [format, base64] as const)))(
    'verifies a %s event (base64: %s) and hands the handler that event, and refuses it tampered',
    async (format, base64) => {
      const seen: LambdaWebhookContext[] = [];
      const handler = verifyWebhook({ secret: SECRET, now }, (_event, delivery) => void seen.push(delivery));
      const event = signedLambdaEvent(body, { secret: SECRET, timestamp: NOW_SECONDS, format, base64 });
      const context = testLambdaContext();
      expect((await handler(event, context)).statusCode).toBe(204);
      expect(seen.map(({ id, request, context }) => [id, request, context])).toEqual([['evt_1', event, context]]);
      const changed = body.replace('obj_evt_1', 'obj_evt_2');
      const tampered = { ...event, body: base64 ? Buffer.from(changed).toString('base64') : changed };
      const refused = await handler(tampered as never, testLambdaContext());
      expect([refused.statusCode, JSON.parse(refused.body!).error.code]).toEqual([400, 'invalid_signature']);
    },
  );

  it.each(['rest', 'http'] as const)("reads the tenant from a %s event's path parameters", async (format) => {
    const tenants: Array<string | undefined> = [];
    const handler = verifyWebhook(
      { now, tenants: { of: (request) => ('pathParameters' in request ? request.pathParameters?.tenant : undefined), secret: (tenant) => (tenant === 'acme' ? SECRET : undefined) } },
      (_event, { tenant }) => void tenants.push(tenant),
    );
    const event = signedLambdaEvent(body, { secret: SECRET, timestamp: NOW_SECONDS, format, path: '/webhooks/acme', pathParameters: { tenant: 'acme' } });
    expect((await handler(event, testLambdaContext())).statusCode).toBe(204);
    expect(tenants).toEqual(['acme']);
  });
});
