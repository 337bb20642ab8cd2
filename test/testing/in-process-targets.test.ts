/**
 * simulateDelivery to a Lambda or an Azure handler in this process: every
 * delivery the service makes (copies at once, redeliveries, retries on a
 * shared clock, an attempt past the answer window, stale and wrongly signed
 * deliveries) behaves as against a Fetch handler, through the real Lambda
 * entry on each source's events and the real Azure entry; and each result is
 * answered as the platform answers it.
 */
import { HttpResponse } from '@azure/functions';
import { Buffer } from 'node:buffer';
import { describe, expect, it } from 'vitest';
import { verifyWebhook as azureWebhook } from '../../adapters/azure.js';
import { verifyWebhook as fetchWebhook } from '../../adapters/fetch.js';
import { verifyWebhook as lambdaWebhook } from '../../adapters/lambda.js';
import { WebhookOptionsError } from '../../src/base/options-error.js';
import type { WebhookEvent } from '../../src/index.js';
import { asDeliveryTarget, azureAnswer, lambdaAnswer } from '../../src/testing/in-process-targets.js';
import { simulateDelivery, testEvent, type LambdaEventFormat } from '../../src/testing/index.js';

const SECRET = `whsec_${Buffer.from('in-process-targets-secret-000000').toString('base64')}`;
const FORMATS: readonly LambdaEventFormat[] = ['rest', 'http', 'function-url', 'alb', 'alb-multi-value'];
const noWait = async (): Promise<void> => undefined;
const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

type Target = Parameters<typeof simulateDelivery>[0];
interface ReceiverOptions {
  readonly now?: () => number;
  readonly dedup?: false;
}
type Run = (event: WebhookEvent) => void | Promise<void>;

/** Each kind of target, a receiver of SECRET running `run` for each event. */
const TARGETS: ReadonlyArray<readonly [string, (options: ReceiverOptions, run: Run) => Target]> = [
  ['a Fetch handler', (options, run) => fetchWebhook({ secret: SECRET, onHandlerError: () => undefined, ...options }, async (event) => void (await run(event)))],
  ...FORMATS.map(
    (format) =>
      [
        `a Lambda handler on ${format} events`,
        (options: ReceiverOptions, run: Run): Target => ({
          lambda: lambdaWebhook({ secret: SECRET, onHandlerError: () => undefined, ...options }, async (event) => void (await run(event))),
          format,
        }),
      ] as const,
  ),
  [
    'a Lambda handler on base64 http events',
    (options, run) => ({ lambda: lambdaWebhook({ secret: SECRET, onHandlerError: () => undefined, ...options }, async (event) => void (await run(event))), base64: true }),
  ],
  ['an Azure handler', (options, run) => ({ azure: azureWebhook({ secret: SECRET, onHandlerError: () => undefined, ...options }, async (event) => void (await run(event))) })],
];

describe.each(TARGETS)('simulateDelivery to %s', (_name, receiver) => {
  it('runs the handler once for two copies at once: the second is answered 409 while the first runs, then a duplicate', async () => {
    const runs: string[] = [];
    const target = receiver({}, async (event) => {
      await pause(20);
      runs.push(event.id);
    });
    const event = testEvent('call.missed');
    const result = await simulateDelivery(target, event, { secret: SECRET, copies: 2, sleep: () => pause(30) });
    expect(result.delivered).toBe(true);
    expect(runs).toEqual([event.id]);
    expect(result.attempts).toContainEqual(expect.objectContaining({ status: 409, code: 'delivery_in_progress' }));
    expect(result.attempts).toContainEqual(expect.objectContaining({ status: 200, duplicate: true }));
  });

  it('runs a handler without deduplication twice for two copies at once', async () => {
    const runs: string[] = [];
    const target = receiver({ dedup: false }, async (event) => {
      await pause(20);
      runs.push(event.id);
    });
    const event = testEvent('call.missed');
    expect((await simulateDelivery(target, event, { secret: SECRET, copies: 2, sleep: noWait })).delivered).toBe(true);
    expect(runs).toEqual([event.id, event.id]);
  });

  it('answers a redelivery of a processed event as a duplicate, running nothing again', async () => {
    const runs: string[] = [];
    const target = receiver({}, (event) => void runs.push(event.id));
    const event = testEvent('call.missed');
    expect((await simulateDelivery(target, event, { secret: SECRET })).attempts).toStrictEqual([{ copy: 1, status: 204, ms: expect.any(Number) }]);
    const again = await simulateDelivery(target, event, { secret: SECRET });
    expect(again).toStrictEqual({ delivered: true, attempts: [{ copy: 1, status: 200, duplicate: true, ms: expect.any(Number) }] });
    expect(runs).toEqual([event.id]);
  });

  it("refuses a delivery signed 10 minutes behind the receiver's clock, every attempt, running nothing", async () => {
    const clock = Date.UTC(2024, 0, 1);
    const runs: string[] = [];
    const target = receiver({ now: () => clock }, (event) => void runs.push(event.id));
    const result = await simulateDelivery(target, testEvent('call.missed'), { secret: SECRET, now: () => clock - 600_000, maxAttempts: 2, sleep: noWait });
    expect(result.delivered).toBe(false);
    expect(result.attempts.map(({ status, code }) => [status, code])).toEqual([
      [400, 'timestamp_too_old'],
      [400, 'timestamp_too_old'],
    ]);
    expect(runs).toEqual([]);
  });

  it('refuses a delivery signed with another secret', async () => {
    const target = receiver({}, () => undefined);
    const result = await simulateDelivery(target, testEvent('call.missed'), { secret: SECRET.replace('w', 'W'), maxAttempts: 1 });
    expect(result.attempts.map(({ status, code }) => [status, code])).toEqual([[400, 'invalid_signature']]);
  });

  it('delivers on the third attempt to a handler failing twice, each retry signed later by the wait on a shared fake clock', async () => {
    let clock = Date.UTC(2024, 0, 1);
    let runs = 0;
    const target = receiver({ now: () => clock }, () => {
      if (++runs < 3) throw new Error('not yet');
    });
    const sleep = async (ms: number): Promise<void> => void (clock += ms);
    const result = await simulateDelivery(target, testEvent('call.missed'), { secret: SECRET, now: () => clock, sleep });
    expect(result.delivered).toBe(true);
    expect(result.attempts.map(({ status, code }) => [status, code])).toEqual([[500, 'handler_failed'], [500, 'handler_failed'], [204, undefined]]);
  });

  it('retries past a handler slower than the answer window, and the retry after it ended is a duplicate', async () => {
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const runs: string[] = [];
    const target = receiver({}, async (event) => {
      await gate;
      runs.push(event.id);
    });
    const event = testEvent('call.missed');
    const sleep = async (): Promise<void> => {
      open();
      await pause(20);
    };
    const result = await simulateDelivery(target, event, { secret: SECRET, answerWindowMs: 50, sleep });
    expect(result.delivered).toBe(true);
    expect(result.attempts[0]).toStrictEqual({ copy: 1, ms: expect.any(Number) });
    expect(result.attempts.at(-1)).toMatchObject({ status: 200, duplicate: true });
    expect(runs).toEqual([event.id]);
  });
});

describe('simulateDelivery to a Lambda handler', () => {
  it.each(FORMATS)('answers 502, as the source does, when a handler of %s events throws', async (format) => {
    const throwing = { lambda: async () => Promise.reject(new Error('boom')), format } as Target;
    const result = await simulateDelivery(throwing, testEvent('call.missed'), { secret: SECRET, maxAttempts: 1 });
    expect(result.attempts.map(({ status }) => status)).toEqual([502]);
    // What API Gateway sends for it.
    const answer = await (asDeliveryTarget(throwing, Date.now) as (request: Request) => Promise<Response>)(new Request('http://receiver.test/', { method: 'POST', body: '{}' }));
    expect([answer.status, await answer.json()]).toEqual([502, { message: 'Internal server error' }]);
  });

  it('answers 200 for a result without a statusCode from an HTTP API (the default) or a Function URL, and 502 from a REST API or an ALB', async () => {
    const statuses = [];
    for (const format of [undefined, ...FORMATS]) {
      const target = { lambda: async () => ({ received: true }), format } as Target;
      statuses.push((await simulateDelivery(target, testEvent('call.missed'), { secret: SECRET, maxAttempts: 1 })).attempts[0]!.status);
    }
    expect(statuses).toEqual([200, 502, 200, 200, 502, 502]);
  });

  it('takes the result of a handler that returns no Promise from its callback', async () => {
    const answers = [new Error('boom'), null, undefined];
    const result = await simulateDelivery(
      { lambda: (_event, _context, callback) => void setTimeout(() => callback(answers.shift(), { statusCode: 204 })) },
      testEvent('call.missed'),
      { secret: SECRET, maxAttempts: 2, sleep: noWait },
    );
    expect(result.attempts.map(({ status }) => status)).toEqual([502, 204]);
    const again = await simulateDelivery(
      { lambda: (_event, _context, callback) => callback(answers.shift(), { statusCode: 202 }) },
      testEvent('call.missed'),
      { secret: SECRET, maxAttempts: 1 },
    );
    expect(again.attempts.map(({ status }) => status)).toEqual([202]);
  });

  it('calls the handler with a fresh context for each attempt, on the clock of the delivery, and the event of the format', async () => {
    let clock = Date.UTC(2024, 0, 1);
    const seen: Array<[string, number, string]> = [];
    const target: Target = {
      format: 'rest',
      lambda: async (event, context) => {
        clock += 1_000;
        seen.push([context.awsRequestId, context.getRemainingTimeInMillis(), event.multiValueHeaders['Webhook-Id']![0]!]);
        return { statusCode: seen.length === 1 ? 500 : 204, body: '' };
      },
    };
    const event = testEvent('call.missed');
    await simulateDelivery(target, event, { secret: SECRET, now: () => clock, sleep: noWait });
    expect(seen.map(([, remaining, id]) => [remaining, id])).toEqual([
      [2_000, event.id],
      [2_000, event.id],
    ]);
    expect(seen[0]![0]).not.toBe(seen[1]![0]);
  });

  it('sends each attempt base64-encoded when asked, as a source does a body that is no text', async () => {
    const seen: Array<[boolean, string]> = [];
    const target: Target = {
      format: 'alb',
      base64: true,
      lambda: async (event) => {
        seen.push([event.isBase64Encoded, Buffer.from(event.body!, 'base64').toString('utf8')]);
        return { statusCode: 204 };
      },
    };
    const event = testEvent('call.missed');
    await simulateDelivery(target, event, { secret: SECRET });
    expect(seen).toEqual([[true, JSON.stringify(event)]]);
  });

  it('reaches the tenant of the path parameters given', async () => {
    const tenants: Array<string | undefined> = [];
    const handler = lambdaWebhook(
      { tenants: { of: (request) => ('pathParameters' in request ? request.pathParameters?.tenant : undefined), secret: (tenant) => (tenant === 'acme' ? SECRET : undefined) } },
      (_event, { tenant }) => void tenants.push(tenant),
    );
    const result = await simulateDelivery({ lambda: handler, format: 'rest', path: '/webhooks/acme', pathParameters: { tenant: 'acme' } }, testEvent('call.missed'), { secret: SECRET });
    expect([result.delivered, tenants]).toEqual([true, ['acme']]);
  });
});

describe('lambdaAnswer', () => {
  const result = {
    statusCode: 201,
    headers: { 'x-one': 1 },
    multiValueHeaders: { 'x-many': ['a', true] },
    cookies: ['a=1'],
    body: Buffer.from('queued').toString('base64'),
    isBase64Encoded: true,
  };

  it.each([
    ['rest', { 'x-one': '1', 'x-many': 'a, true' }],
    ['http', { 'x-one': '1', 'set-cookie': 'a=1' }],
    ['function-url', { 'x-one': '1', 'set-cookie': 'a=1' }],
    ['alb', { 'x-one': '1' }],
    ['alb-multi-value', { 'x-many': 'a, true' }],
  ] as const)('sends what %s sends of a result: its headers, the base64 body decoded', async (format, headers) => {
    const answer = lambdaAnswer(result, format);
    expect([answer.status, Object.fromEntries(answer.headers), await answer.text()]).toEqual([201, headers, 'queued']);
  });

  it('infers, for an HTTP API or Function URL result without a statusCode, 200 and the result as its JSON body, a string as it is', async () => {
    const answers = [lambdaAnswer({ received: true }, 'http'), lambdaAnswer('accepted', 'function-url'), lambdaAnswer(undefined, 'http'), lambdaAnswer(null, 'http')];
    expect(await Promise.all(answers.map(async (answer) => [answer.status, answer.headers.get('content-type'), await answer.text()]))).toEqual([
      [200, 'application/json', '{"received":true}'],
      [200, 'application/json', 'accepted'],
      [200, 'application/json', ''],
      [200, 'application/json', 'null'],
    ]);
  });

  it('takes statuses from 200 to 599, a result without a body or headers, and ignores what is no header', async () => {
    expect([200, 599].map((statusCode) => lambdaAnswer({ statusCode }, 'alb').status)).toEqual([200, 599]);
    const answer = lambdaAnswer({ statusCode: 200, body: null, headers: 'x-one', multiValueHeaders: { 'x-many': 'a' } }, 'rest');
    expect([answer.status, [...answer.headers], await answer.text()]).toEqual([200, [], '']);
    expect([...lambdaAnswer({ statusCode: 200, headers: null, multiValueHeaders: null }, 'rest').headers]).toEqual([]);
  });

  it('sends no body with a status that has none, and a body as it is unless isBase64Encoded is true', async () => {
    expect(await lambdaAnswer({ statusCode: 204, body: 'ignored' }, 'rest').text()).toBe('');
    expect(await lambdaAnswer({ statusCode: 200, body: 'cXVldWVk', isBase64Encoded: 'true' }, 'http').text()).toBe('cXVldWVk');
  });

  it.each([
    ['a status below 200', { statusCode: 199 }],
    ['a status past 599', { statusCode: 600 }],
    ['a status that is a string', { statusCode: '200' }],
    ['a body that is no string', { statusCode: 200, body: { queued: true } }],
    ['a header HTTP cannot carry', { statusCode: 200, headers: { 'x-one': 'a\nb' } }],
    ['nothing', undefined],
  ])('answers 502 for %s', (_name, answer) => {
    expect(lambdaAnswer(answer, 'rest').status).toBe(502);
  });
});

describe('simulateDelivery to an Azure handler', () => {
  it('answers 500, as the Functions host does, when the handler throws or answers what is no object', async () => {
    const answers: Array<() => unknown> = [
      () => {
        throw new Error('boom');
      },
      () => 'done',
    ];
    const target: Target = { azure: async () => answers.shift()!() };
    const result = await simulateDelivery(target, testEvent('call.missed'), { secret: SECRET, maxAttempts: 2, sleep: noWait });
    expect(result.attempts.map(({ status }) => status)).toEqual([500, 500]);
  });

  it('reaches the tenant of the route parameters given, at the URL given, with a fresh context each attempt', async () => {
    const seen: Array<[string | undefined, string, string]> = [];
    const handler = azureWebhook(
      { tenants: { of: (request) => request.params.tenant, secret: (tenant) => (tenant === 'acme' ? SECRET : undefined) }, onHandlerError: () => undefined },
      (_event, { tenant, request, context }) => {
        seen.push([tenant, request.url, context.invocationId]);
        if (seen.length === 1) throw new Error('not yet');
      },
    );
    const target = { azure: handler, url: 'https://receiver.test/api/webhooks/acme', params: { tenant: 'acme' } };
    expect((await simulateDelivery(target, testEvent('call.missed'), { secret: SECRET, sleep: noWait })).delivered).toBe(true);
    expect(seen.map(([tenant, url]) => [tenant, url])).toEqual([
      ['acme', 'https://receiver.test/api/webhooks/acme'],
      ['acme', 'https://receiver.test/api/webhooks/acme'],
    ]);
    expect(seen[0]![2]).not.toBe(seen[1]![2]);
  });
});

describe('azureAnswer', () => {
  it('answers nothing 204, a status absent 200, and jsonBody as JSON with its content type unless one is given', async () => {
    expect([azureAnswer(undefined).status, azureAnswer(null).status]).toEqual([204, 204]);
    expect(() => azureAnswer('done')).toThrow(new TypeError('the HTTP answer must be an object'));
    const json = azureAnswer({ jsonBody: { queued: true } });
    expect([json.status, json.headers.get('content-type'), await json.text()]).toEqual([200, 'application/json', '{"queued":true}']);
    const typed = azureAnswer({ status: 202, headers: [['Content-Type', 'application/vnd.queued+json']], jsonBody: 1 });
    expect([typed.status, typed.headers.get('content-type'), await typed.text()]).toEqual([202, 'application/vnd.queued+json', '1']);
  });

  it("sends no body with a status that has none, and takes Azure's HttpResponse class", async () => {
    expect(await azureAnswer({ status: 204, body: 'ignored', jsonBody: {} }).text()).toBe('');
    const answer = azureAnswer(new HttpResponse({ status: 503, headers: { 'retry-after': '5' }, body: 'later' }));
    expect([answer.status, answer.headers.get('retry-after'), await answer.text()]).toEqual([503, '5', 'later']);
  });
});

describe('simulateDelivery targets', () => {
  it('takes a URL and a Fetch handler as they are', () => {
    const handler = (): Response => new Response(null, { status: 204 });
    expect([asDeliveryTarget('http://127.0.0.1:3000/webhooks', Date.now), asDeliveryTarget(handler, Date.now)]).toEqual(['http://127.0.0.1:3000/webhooks', handler]);
  });

  it.each<[unknown, string]>([
    [{ lambda: 'handler' }, 'svc-webhooks: lambda must be a function'],
    [{ lambda: () => undefined, format: 'soap' }, "svc-webhooks: format must be 'rest' or 'http' or 'function-url' or 'alb' or 'alb-multi-value'"],
    [{ lambda: () => undefined, format: 'alb', pathParameters: {} }, 'svc-webhooks: pathParameters: a load balancer has no routes, so its events have none'],
    [{ azure: null }, 'svc-webhooks: azure must be a function'],
    [{ azure: () => undefined, url: 'api/webhooks' }, 'svc-webhooks: url must be an absolute URL'],
    [{ fetch: () => undefined }, 'svc-webhooks: simulateDelivery delivers to a URL, a Fetch handler, { lambda: handler } or { azure: handler }'],
    [42, 'svc-webhooks: simulateDelivery delivers to a URL, a Fetch handler, { lambda: handler } or { azure: handler }'],
    [null, 'svc-webhooks: simulateDelivery delivers to a URL, a Fetch handler, { lambda: handler } or { azure: handler }'],
  ])('refuses the target %j before sending anything', async (target, message) => {
    await expect(simulateDelivery(target as never, testEvent('webhook.test'), { secret: SECRET })).rejects.toThrow(new WebhookOptionsError(message));
  });
});
