import { describe, expect, expectTypeOf, it, vi } from 'vitest';
import { verifyWebhook, type LambdaWebhookContext, type LambdaWebhookOptions, type LambdaWebhookResult } from '../../adapters/lambda.js';
import type { WebhookEvent } from '../../src/index.js';
import { adapterContract, CUSTOM_ERROR_STATUS, customErrorBody, type HarnessSpec } from '../helpers/adapter-contract.js';
import { orderingContract } from '../helpers/ordering-contract.js';
import { hearDeliveries } from '../helpers/heard-traces.js';
import { httpResponseOf, LAMBDA_SOURCES, lambdaContext, lambdaEvent, type LambdaSource } from '../helpers/lambda-events.js';
import { deliveryOf, envelope, keyOf, SECRET, now, signedRequest } from '../helpers/signed-request.js';
import { creationMistakes, expectAnswerAfterSettling, heldStore } from '../helpers/handler-adapter.js';
import { expectOptionMistake } from '../helpers/option-mistake.js';
import { TestDedupStore } from '../helpers/test-dedup-store.js';
import { WebhookOptionsError } from '../../src/base/options-error.js';

const options = { secret: SECRET, now } as const;

function webhookFunction({ options, route, customErrors }: HarnessSpec) {
  const onError: LambdaWebhookOptions['onError'] = customErrors
    ? (error) => ({ statusCode: CUSTOM_ERROR_STATUS, body: JSON.stringify(customErrorBody(error.code)) })
    : undefined;
  // The contract's failing route throws on purpose: its report would only be noise here.
  return verifyWebhook({ onHandlerError: () => undefined, ...options, onError }, async (event, { id, stale }) => {
    expectTypeOf(event).toEqualTypeOf<WebhookEvent>();
    return { statusCode: await route.handle(event, id, stale), body: '' };
  });
}

/** Invokes the function with each request as `source` would, and reads its result as that source's HTTP response. */
function lambdaHarness(source: LambdaSource, { base64 = false } = {}) {
  return async (spec: HarnessSpec) => {
    const handler = webhookFunction(spec);
    return {
      post: async (request: Parameters<typeof lambdaEvent>[1]) => httpResponseOf(source, await handler(lambdaEvent(source, request, { base64 }), lambdaContext)),
      close: async () => {},
    };
  };
}

for (const source of LAMBDA_SOURCES) {
  describe(`lambda adapter with ${source} events`, () => {
    adapterContract(lambdaHarness(source));
    orderingContract(lambdaHarness(source));

    it('decodes a base64 body and verifies its bytes', async () => {
      const calls: string[] = [];
      const handler = verifyWebhook(options, (_event, { id }) => void calls.push(id));
      const signed = signedRequest();
      expect((await handler(lambdaEvent(source, signed, { base64: true }), lambdaContext)).statusCode).toBe(204);
      const tampered = { ...signed, body: signed.body.replace('obj_evt_1', 'obj_evt_2') };
      const refusal = await handler(lambdaEvent(source, tampered, { base64: true }), lambdaContext);
      expect([refusal.statusCode, JSON.parse(refusal.body!).error.code]).toEqual([400, 'invalid_signature']);
      expect(calls).toEqual(['evt_1']);
    });

    it(`answers in the shape ${source} takes: ${source === 'alb-multi-value' ? 'multiValueHeaders' : 'headers'}, a string body`, async () => {
      const handler = verifyWebhook(options, () => undefined);
      const accepted = await handler(lambdaEvent(source, signedRequest()), lambdaContext);
      const refused = await handler(lambdaEvent(source, signedRequest({ secret: SECRET.replace('w', 'W') })), lambdaContext);
      const contentType = source === 'alb-multi-value' ? { multiValueHeaders: { 'content-type': ['application/json'] } } : { headers: { 'content-type': 'application/json' } };
      expect(accepted).toEqual({ statusCode: 204, ...(source === 'alb-multi-value' ? { multiValueHeaders: {} } : { headers: {} }), body: '', isBase64Encoded: false });
      expect(refused).toMatchObject({ statusCode: 400, ...contentType, isBase64Encoded: false });
      expect(refused).not.toHaveProperty(source === 'alb-multi-value' ? 'headers' : 'multiValueHeaders');
    });
  });
}

describe('lambda adapter on base64 bodies', () => {
  adapterContract(lambdaHarness('http-api', { base64: true }));
});

describe('lambda adapter', () => {
  it('hands the handler the event, its delivery (id, timestamp, keyId, dedupKey), the Lambda event and context', async () => {
    const seen: Array<[WebhookEvent, LambdaWebhookContext]> = [];
    const handler = verifyWebhook(options, (event, context) => void seen.push([event, context]));
    const request = lambdaEvent('http-api', signedRequest());
    await handler(request, lambdaContext);
    expect(seen).toEqual([[JSON.parse(signedRequest().body), { ...deliveryOf(), request, context: lambdaContext }]]);
  });

  it('returns the handler result as it is, and settles the claim by its statusCode', async () => {
    const dedup = new TestDedupStore();
    const answers: LambdaWebhookResult[] = [
      { statusCode: 503, body: 'later' },
      { statusCode: 202, headers: { 'x-queued': 'yes' }, body: '{"queued":true}', isBase64Encoded: false },
    ];
    const handler = verifyWebhook({ ...options, dedup: { store: dedup } }, () => answers.shift());
    const event = lambdaEvent('api-gateway-rest', signedRequest());
    expect(await handler(event, lambdaContext)).toEqual({ statusCode: 503, body: 'later' });
    expect(dedup.stateOf(keyOf('evt_1'))).toBe('absent');
    expect(await handler(event, lambdaContext)).toEqual({ statusCode: 202, headers: { 'x-queued': 'yes' }, body: '{"queued":true}', isBase64Encoded: false });
    expect(dedup.stateOf(keyOf('evt_1'))).toBe('done');
  });

  it('waits for the claim to settle before it returns, since Lambda freezes what runs after', async () => {
    const held = heldStore();
    const handler = verifyWebhook({ ...options, dedup: { store: held.dedup } }, () => undefined);
    const result = await expectAnswerAfterSettling(held, handler(lambdaEvent('alb', signedRequest()), lambdaContext));
    expect(result.statusCode).toBe(204);
  });

  it('reads header names in any case, and every value of a repeated one, joined as Node joins them', async () => {
    // Signed with the id Node would see for two webhook-id values: "evt_1, evt_2".
    const id = 'evt_1, evt_2';
    const signed = signedRequest({ id, body: envelope(id, 'call.missed') });
    const event = lambdaEvent('api-gateway-rest', signed) as { multiValueHeaders: Record<string, string[]>; headers: Record<string, string> };
    event.multiValueHeaders['Webhook-Id'] = ['evt_1'];
    event.multiValueHeaders['WEBHOOK-ID'] = ['evt_2'];
    // A signature entry that matches nothing, ahead of the right one.
    event.multiValueHeaders['Webhook-Signature'] = ['v1,bm90LXRoZS1zaWduYXR1cmUtb2YtdGhpcy1ib2R5LWF0LWFsbA==', signed.headers['webhook-signature']!];
    // REST APIs keep only the last value in `headers`: it must not be what is read.
    event.headers['Webhook-Id'] = 'evt_2';
    const ids: string[] = [];
    const handler = verifyWebhook(options, (_event, context) => void ids.push(context.id));
    expect((await handler(event as never, lambdaContext)).statusCode).toBe(204);
    expect(ids).toEqual([id]);
  });

  it('takes a hand-made event with nothing but headers and a body', async () => {
    const { body, headers } = signedRequest();
    const result = await verifyWebhook(options, () => undefined)({ headers, body } as never, lambdaContext);
    expect(result).toEqual({ statusCode: 204, headers: {}, body: '', isBase64Encoded: false });
  });

  it('answers a request with no headers and no body 400 missing_header', async () => {
    const event = { ...lambdaEvent('api-gateway-rest', signedRequest()), headers: null, multiValueHeaders: null, body: null };
    const result = await verifyWebhook(options, () => undefined)(event as never, lambdaContext);
    expect([result.statusCode, JSON.parse(result.body!).error.code]).toEqual([400, 'missing_header']);
  });

  it('answers a throwing handler 500 with a fixed error, and tells onHandlerError', async () => {
    const dedup = new TestDedupStore();
    const onHandlerError = vi.fn();
    const failure = new Error('db password=hunter2 refused');
    const handler = verifyWebhook({ ...options, dedup: { store: dedup }, onHandlerError }, () => {
      throw failure;
    });
    const result = await handler(lambdaEvent('http-api', signedRequest()), lambdaContext);
    expect(result).toEqual({
      statusCode: 500,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ error: { code: 'handler_failed', message: 'the handler for this event failed; retry later' } }),
      isBase64Encoded: false,
    });
    expect(onHandlerError).toHaveBeenCalledExactlyOnceWith(failure, JSON.parse(signedRequest().body), deliveryOf());
    expect(dedup.stateOf(keyOf('evt_1'))).toBe('absent');
  });

  it("logs one line for a throwing handler by default, the handler's own error in it, never in the answer to the sender", async () => {
    const log = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      const handler = verifyWebhook(options, () => Promise.reject(new Error('db password=hunter2 refused')));
      const result = await handler(lambdaEvent('function-url', signedRequest()), lambdaContext);
      expect(result.body).not.toContain('hunter2');
      expect(log).toHaveBeenCalledTimes(1);
      expect(log.mock.calls[0]!.join(' ')).toMatch(/^svc-webhooks: event "evt_1" of type "call.missed": the handler failed \(Error: db password=hunter2 refused\)/);
    } finally {
      log.mockRestore();
    }
  });

  it('answers 500 when the handler returns something that is no result', async () => {
    const onHandlerError = vi.fn();
    const handler = verifyWebhook({ ...options, onHandlerError }, (() => ({ body: 'no status' })) as never);
    expect((await handler(lambdaEvent('alb', signedRequest()), lambdaContext)).statusCode).toBe(500);
    expect(onHandlerError.mock.calls[0]![0]).toBeInstanceOf(TypeError);
  });

  it('hands onError the refusal, the Lambda event and its context; its own Retry-After, in any letter case, is kept', async () => {
    const dedup = new TestDedupStore();
    await dedup.begin(keyOf('evt_1'));
    const heard: unknown[][] = [];
    const onError = (...args: unknown[]) => {
      heard.push(args);
      return { statusCode: 429, headers: { 'Retry-After': '90' }, body: '' };
    };
    const event = lambdaEvent('http-api', signedRequest());
    const handler = verifyWebhook({ ...options, dedup: { store: dedup, leaseMs: 30_000 }, onError }, () => undefined);
    expect(await handler(event, lambdaContext)).toEqual({ statusCode: 429, headers: { 'Retry-After': '90' }, body: '' });
    expect(heard).toHaveLength(1);
    const [error, request, context] = heard[0]!;
    expect((error as { code: string }).code).toBe('delivery_in_progress');
    expect(request).toBe(event);
    expect(context).toBe(lambdaContext);
  });

  it('adds Retry-After to the answer of onError for a delivery in progress, in the source shape', async () => {
    const dedup = new TestDedupStore();
    await dedup.begin(keyOf('evt_1'));
    const onError = () => ({ statusCode: 429, body: '' });
    const handler = verifyWebhook({ ...options, dedup: { store: dedup, leaseMs: 30_000 }, onError }, () => undefined);
    expect(await handler(lambdaEvent('http-api', signedRequest()), lambdaContext)).toEqual({ statusCode: 429, headers: { 'retry-after': '30' }, body: '' });
    expect(await handler(lambdaEvent('alb-multi-value', signedRequest()), lambdaContext)).toEqual({
      statusCode: 429,
      multiValueHeaders: { 'retry-after': ['30'] },
      body: '',
    });
  });

  it.each([null, undefined])('verifies a %s body as an empty one', async (body) => {
    // Signed over no bytes at all: the signature holds, and the envelope check refuses it.
    const event = { ...lambdaEvent('api-gateway-rest', signedRequest({ body: '' })), body };
    const result = await verifyWebhook(options, () => undefined)(event as never, lambdaContext);
    expect([result.statusCode, JSON.parse(result.body!).error.code]).toEqual([400, 'invalid_payload']);
  });

  it('skips headers whose value is null or undefined, wherever their name puts them', async () => {
    const { body, headers } = signedRequest();
    const ids: string[] = [];
    const handler = verifyWebhook(options, (_event, context) => void ids.push(context.id));
    const event = { headers: { ...headers, 'Webhook-Id': null, 'WEBHOOK-ID': undefined }, body };
    expect((await handler(event as never, lambdaContext)).statusCode).toBe(204);
    expect(ids).toEqual(['evt_1']);
  });

  it('reads no header as webhook-id whose name only matches it once upper-cased', async () => {
    // "ı" (dotless i) upper-cases to "I": "webhook-ıd" is another header.
    const { body, headers } = signedRequest();
    const ids: string[] = [];
    const handler = verifyWebhook(options, (_event, context) => void ids.push(context.id));
    expect((await handler({ headers: { ...headers, 'webhook-\u0131d': 'evt_2' }, body } as never, lambdaContext)).statusCode).toBe(204);
    expect(ids).toEqual(['evt_1']);
  });

  it('answers an ALB event whose multiValueHeaders is left undefined in headers', async () => {
    const event = { ...lambdaEvent('alb', signedRequest()), multiValueHeaders: undefined };
    expect(await verifyWebhook(options, () => undefined)(event as never, lambdaContext)).toEqual({ statusCode: 204, headers: {}, body: '', isBase64Encoded: false });
  });

  it('gives the default answer, and logs why, when onError returns no result', async () => {
    const log = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const handler = verifyWebhook({ ...options, onError: (() => ({ status: 418 })) as never }, () => undefined);
    const result = await handler(lambdaEvent('http-api', signedRequest({ secret: SECRET.replace('w', 'W') })), lambdaContext);
    expect([result.statusCode, JSON.parse(result.body!).error.code]).toEqual([400, 'invalid_signature']);
    expect(log.mock.calls.at(-1)).toEqual(['svc-webhooks: onError failed (it must answer { statusCode, ... }); a request it left unanswered gets the default answer']);
    log.mockRestore();
  });

  it('returns the answer of onError as it is when the refusal adds no headers', async () => {
    const onError = () => ({ statusCode: 418, body: 'refused' });
    const handler = verifyWebhook({ ...options, onError }, () => undefined);
    for (const source of LAMBDA_SOURCES) {
      const result = await handler(lambdaEvent(source, signedRequest({ secret: SECRET.replace('w', 'W') })), lambdaContext);
      expect(result).toStrictEqual({ statusCode: 418, body: 'refused' });
    }
  });

  it('names what the handler must return when it returns null', async () => {
    const onHandlerError = vi.fn();
    const result = await verifyWebhook({ ...options, onHandlerError }, (() => null) as never)(lambdaEvent('http-api', signedRequest()), lambdaContext);
    expect(result.statusCode).toBe(500);
    expect(onHandlerError.mock.calls[0]![0]).toEqual(new WebhookOptionsError('svc-webhooks: the webhook handler must return { statusCode, ... } or nothing'));
  });

  it.each(creationMistakes)('throws WebhookOptionsError at creation for %s, saying what is wrong', (_name, badOptions, handler, message) => {
    expectOptionMistake(() => verifyWebhook(badOptions as never, handler as never), message);
  });

  it.each([
    ['headers', 'constructor', 'http-api'],
    ['headers', '__proto__', 'http-api'],
    ['multiValueHeaders', 'Constructor', 'api-gateway-rest'],
    ['multiValueHeaders', '__proto__', 'alb-multi-value'],
  ] as const)('verifies as usual a signed delivery whose %s hold a header named %s (%s)', async (field, name, source) => {
    const ids: string[] = [];
    const handler = verifyWebhook(options, (_event, context) => void ids.push(context.id));
    const event = lambdaEvent(source, signedRequest()) as unknown as Record<string, Record<string, unknown>>;
    // Defined as own keys, as JSON.parse leaves them: an assignment to __proto__ would set the prototype.
    Object.defineProperty(event[field], name, { value: field === 'headers' ? 'x' : ['x', 'y'], enumerable: true });
    expect((await handler(event as never, lambdaContext)).statusCode).toBe(204);
    expect(ids).toEqual(['evt_1']);
  });

  it.each([
    ['a null event', null],
    ['an event that is a string', 'POST /webhooks'],
    ["a warmer's ping, an event without headers", { source: 'serverless-plugin-warmup' }],
    ['an event whose headers are null', { headers: null, multiValueHeaders: null, body: '{}' }],
    ['a body that is an object', { headers: {}, body: { id: 'evt_1' } }],
    ['a body that is a number', { multiValueHeaders: {}, body: 42 }],
  ])('answers 500 not_http_request, a setup mistake, for %s, and runs no handler', async (name, event) => {
    const handler = vi.fn();
    const result = await verifyWebhook(options, handler)(event as never, lambdaContext);
    expect(result).toMatchObject({ statusCode: 500, headers: { 'content-type': 'application/json' } });
    const says = name.includes('body') ? "the Lambda event's body is no string" : 'the Lambda event is no HTTP request';
    expect(JSON.parse(result.body!).error).toEqual({ code: 'not_http_request', message: says });
    expect(handler).not.toHaveBeenCalled();
  });

  it.each([
    ["a REST API's, whose headers are null but httpMethod says it is one", { httpMethod: 'POST', headers: null, multiValueHeaders: null, body: '{}' }],
    ["an HTTP API's, with a rawPath and no headers", { rawPath: '/webhooks', body: '{}' }],
  ])('verifies an event without headers that is an HTTP request, %s, as a request that lacks them', async (_name, event) => {
    const handler = vi.fn();
    const result = await verifyWebhook(options, handler)(event as never, lambdaContext);
    expect({ status: result.statusCode, code: JSON.parse(result.body!).error.code }).toEqual({ status: 400, code: 'missing_header' });
    expect(handler).not.toHaveBeenCalled();
  });

  it.each([
    ['a null event', null],
    ['an event that is a string', 'warmer'],
    ['an event that is a number', 42],
  ])('answers 500 not_http_request for %s while someone listens on the delivery channel', async (_name, event) => {
    const heard = hearDeliveries();
    try {
      const result = await verifyWebhook(options, () => undefined)(event as never, lambdaContext);
      expect(result.statusCode).toBe(500);
      expect(JSON.parse(result.body!).error.code).toBe('not_http_request');
      expect(heard.traces).toEqual([{ entry: 'lambda', status: 500, outcome: 'not_http_request' }]);
    } finally {
      heard.stop();
    }
  });

  it('verifies an event without a body as an empty body (400 invalid_signature), not as a malformed event', async () => {
    const { body: _body, ...bodiless } = lambdaEvent('http-api', signedRequest()) as unknown as Record<string, unknown>;
    const result = await verifyWebhook(options, () => undefined)(bodiless as never, lambdaContext);
    expect([result.statusCode, JSON.parse(result.body!).error.code]).toEqual([400, 'invalid_signature']);
  });

  it('answers an event whose requestContext is null, as a hand-made one may be, in headers', async () => {
    const event = { ...lambdaEvent('http-api', signedRequest()), requestContext: null } as never;
    const result = await verifyWebhook(options, () => undefined)(event, lambdaContext);
    expect(result).toMatchObject({ statusCode: 204, headers: {} });
  });

  it('answers 404 unknown_tenant for a lone surrogate in pathParameters, with no lookup', async () => {
    const lookups: string[] = [];
    const handler = verifyWebhook(
      {
        now,
        tenants: { of: (request) => ('pathParameters' in request ? request.pathParameters?.tenant : undefined), secret: (tenant: string) => void lookups.push(tenant) },
      },
      () => undefined,
    );
    const event = { ...lambdaEvent('http-api', signedRequest()), pathParameters: { tenant: '\ud800' } };
    const result = await handler(event, lambdaContext);
    expect(result.statusCode).toBe(404);
    expect(JSON.parse(result.body!).error.code).toBe('unknown_tenant');
    expect(lookups).toEqual([]);
  });

  it('decodes the body only for a boolean isBase64Encoded, never for the string "false" or "true"', async () => {
    const handler = verifyWebhook({ ...options, dedup: false }, () => undefined);
    for (const flag of ['false', 'true']) {
      const event = { ...lambdaEvent('http-api', signedRequest()), isBase64Encoded: flag };
      expect((await handler(event as never, lambdaContext)).statusCode).toBe(204);
    }
  });

  it.each(['Retry-After', 'RETRY-AFTER'])("adds no retry-after beside onError's own %s", async (own) => {
    const dedup = new TestDedupStore();
    await dedup.begin(keyOf('evt_1'));
    const onError = () => ({ statusCode: 429, headers: { [own]: '120' }, body: '' });
    const handler = verifyWebhook({ ...options, dedup: { store: dedup, leaseMs: 30_000 }, onError }, () => undefined);
    expect(await handler(lambdaEvent('http-api', signedRequest()), lambdaContext)).toEqual({ statusCode: 429, headers: { [own]: '120' }, body: '' });
    const alb = { statusCode: 429, multiValueHeaders: { [own]: ['120'] }, body: '' };
    const albHandler = verifyWebhook({ ...options, dedup: { store: dedup, leaseMs: 30_000 }, onError: () => alb }, () => undefined);
    expect(await albHandler(lambdaEvent('alb-multi-value', signedRequest()), lambdaContext)).toEqual(alb);
  });
});
