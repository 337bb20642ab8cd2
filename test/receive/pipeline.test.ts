/**
 * createPipeline over a platform of our own: its checks at creation, the
 * order of its steps, what becomes of a handler, an onError or a
 * platform callback that answers something that is no answer, or throws,
 * and the log of refused requests: a line per code a minute at most.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import {
  MemoryDedupStore,
  WebhookBodyError,
  type EventSchemas,
  type HandlerOptions,
  type ReceiverOptions,
  type SingleEndpoint,
  type WebhookDelivery,
  type WebhookError,
  type WebhookEvent,
} from '../../src/index.js';
import { hearDeliveries } from '../helpers/heard-traces.js';
import { tooLarge } from '../../src/core/payload.js';
import { SenderGoneError } from '../../src/receive/body-limits.js';
import { createPipeline, type PipelineOptions } from '../../src/receive/pipeline.js';
import type { Platform } from '../../src/receive/platform.js';
import type { WebhookResponse } from '../../src/receive/responses.js';
import type { EntryRunner, Route } from '../../src/receive/what-runs.js';
import { deliveryOf, keyOf, NOW_SECONDS, OLD_SECRET, now, SECRET, signedRequest, type RequestSpec, type SignedRequest } from '../helpers/signed-request.js';
import { REFUSAL_LOG_INTERVAL_MS } from '../../src/receive/refusal-log.js';
import { decidedAnswers } from '../helpers/decided-answers.js';
import { recordingLogger } from '../helpers/recording-logger.js';
import { TestDedupStore } from '../helpers/test-dedup-store.js';
import { WebhookOptionsError } from '../../src/base/options-error.js';

class Answer {
  constructor(
    readonly status: number,
    readonly headers: Readonly<Record<string, string>> = {},
    readonly body?: unknown,
  ) {}
}

/** One request: its body (or the read's outcome) and headers. */
interface TestRequest {
  readonly body: string | Promise<string>;
  readonly headers: Record<string, string>;
}

const shape = { isAnswer: (value: unknown): value is Answer => value instanceof Answer, described: 'an Answer', statusOf: (answer: Answer) => answer.status };

/** A platform whose answers are `Answer`s; `onError` is the user's, wrapped as an entry wraps it. */
function platform(onError?: (error: WebhookError) => unknown, extra: Partial<Platform<TestRequest, Answer>> = {}): Platform<TestRequest, Answer> {
  return {
    entry: 'fetch',
    body: (request) => request.body,
    headers: (request) => request.headers,
    userRequest: (request) => request,
    send: (_request, { status, headers, body }) => new Answer(status, headers, body),
    statusOf: (_request, answer) => answer?.status ?? 0,
    onError:
      onError &&
      (async (_request, error, headers) => {
        const answer = await onError(error);
        if (!(answer instanceof Answer)) throw new TypeError('it answered no Answer');
        return new Answer(answer.status, { ...headers, ...answer.headers }, answer.body);
      }),
    ...extra,
  };
}

/** What a handler entry brings: `handler`, whose context here is the delivery with the request, as an entry's holds the host's. */
const single = (handler: unknown): EntryRunner<TestRequest, Answer> => ({ handler, shape, context: (request, delivery: WebhookDelivery) => ({ ...delivery, request }) });

/** A pipeline of a handler entry (without a handler: on or handoff must say what runs), or of a middleware with `route`. */
function entry(options: Partial<PipelineOptions & SingleEndpoint>, handler?: (event: unknown, context: { id: string }) => unknown, on = platform(), route?: Route<TestRequest>) {
  const runner = route === undefined ? single(handler) : { route };
  return createPipeline<TestRequest, Answer>({ secret: SECRET, now, dedup: false, ...options }, on, runner);
}

function request(spec: RequestSpec = {}, body?: Promise<string>): TestRequest {
  const signed = signedRequest(spec);
  return { body: body ?? signed.body, headers: signed.headers };
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('createPipeline: checks at creation', () => {
  it('refuses a handler that is no function', () => {
    expect(() => entry({}, 'handler' as never)).toThrow(new WebhookOptionsError('svc-webhooks: the handler must be a function'));
  });

  it.each([
    ['neither on nor a handler', {}, undefined, 'none'],
    ['both on and a handler', { on: {} }, () => undefined, 'on and a handler'],
  ])('refuses %s', (_name, options, handler, given) => {
    expect(() => entry(options, handler)).toThrow(
      new WebhookOptionsError(`svc-webhooks: say what runs for each delivery with exactly one of on, handoff and a handler function; given: ${given}`),
    );
  });

  it('takes neither on nor a handler from a middleware, whose route runs', () => {
    expect(() => entry({}, undefined, platform(), async () => 204)).not.toThrow();
  });

  it('refuses onHandlerError with a route and no on: no handler of its runs there', () => {
    expect(() => entry({ onHandlerError: () => undefined }, undefined, platform(), async () => 204)).toThrow(
      new WebhookOptionsError('svc-webhooks: onHandlerError takes effect only with on, handoff or a handler'),
    );
  });

  it('refuses the options of rc.1 that moved, at the top level, naming their place now', () => {
    expect(() => entry({ leaseMs: 30_000 } as never, () => undefined)).toThrow(new WebhookOptionsError('svc-webhooks: the option leaseMs is now dedup.leaseMs'));
    expect(() => entry({ secretCacheSize: 10 } as never, () => undefined)).toThrow(new WebhookOptionsError('svc-webhooks: the option secretCacheSize is now tenants.cacheSize'));
  });
});

describe('createPipeline: the single handler', () => {
  it("passes on the handler's own answer, and gives it the platform's context", async () => {
    const receive = entry({}, (_event: unknown, { id }: { id: string }) => new Answer(id === 'evt_1' ? 202 : 500));
    expect(await receive(request())).toEqual(new Answer(202));
  });

  it('answers 204 with no body for a handler that returns nothing, and leaves onError out of it', async () => {
    const onError = vi.fn();
    const receive = createPipeline<TestRequest, Answer>({ secret: SECRET, now, dedup: false }, platform(onError), single(() => undefined));
    expect(await receive(request())).toEqual(new Answer(204, {}, undefined));
    expect(onError).not.toHaveBeenCalled();
  });

  it('lets onHandlerError serve the single handler', async () => {
    const heard: unknown[] = [];
    const receive = entry({ onHandlerError: (error) => void heard.push(error) }, () => {
      throw new Error('boom');
    });
    expect(await receive(request())).toMatchObject({ status: 500 });
    expect(heard).toEqual([new Error('boom')]);
  });

  it('answers 500 for a handler that returns no answer, telling onHandlerError what it should return', async () => {
    const heard: unknown[] = [];
    const receive = entry({ onHandlerError: (error) => void heard.push(error) }, () => 42);
    expect(await receive(request())).toMatchObject({ status: 500, body: { error: { code: 'handler_failed' } } });
    expect(heard).toEqual([new WebhookOptionsError('svc-webhooks: the webhook handler must return an Answer or nothing')]);
  });

  it('tells onHandlerError the delivery whose handler failed', async () => {
    const contexts: unknown[] = [];
    const receive = entry({ onHandlerError: (_error, _event, delivery) => void contexts.push(delivery) }, () => Promise.reject(new Error('boom')));
    await receive(request());
    expect(contexts).toEqual([deliveryOf()]);
  });

  it('answers 204 itself once the handler of on ran', async () => {
    const handled: string[] = [];
    const receive = entry({ on: { 'call.missed': (_event, { id }) => void handled.push(id) } });
    expect(await receive(request({ type: 'call.missed' }))).toEqual(new Answer(204, {}, undefined));
    expect(handled).toEqual(['evt_1']);
  });
});

describe('createPipeline: the outcome header', () => {
  const OUTCOME = 'svc-webhooks-outcome';

  it("refuses an outcomeHeader that is neither 'off' nor 'on'", () => {
    expect(() => entry({ outcomeHeader: 'yes' as never }, () => undefined)).toThrow(new WebhookOptionsError("svc-webhooks: outcomeHeader must be 'off' or 'on'"));
  });

  it('sends none unless asked', async () => {
    expect(await entry({}, () => undefined)(request())).toEqual(new Answer(204, {}, undefined));
    expect(await entry({ outcomeHeader: 'off' }, () => undefined)(request())).toEqual(new Answer(204, {}, undefined));
  });

  it("tells the outcome, how long the user's code ran by the receiver's clock, and which secret matched", async () => {
    let clock = now();
    const receive = entry({ outcomeHeader: 'on', now: () => clock }, () => void (clock += 7));
    expect(await receive(request())).toEqual(new Answer(204, { [OUTCOME]: 'processed; handler-ms=7; key-id=0' }, undefined));
    const failing = entry({ outcomeHeader: 'on', onHandlerError: () => undefined }, () => {
      throw new Error('down');
    });
    expect(((await failing(request())) as Answer).headers[OUTCOME]).toBe('handler_failed; handler-ms=0; key-id=0');
  });

  it.each([
    ['queued', async () => undefined, 'queued'],
    ['found before', async () => 'duplicate' as const, 'duplicate'],
    ['failed', async () => Promise.reject(new Error('queue down')), 'handoff_failed'],
  ])('tells a handoff %s', async (_what, hand, outcome) => {
    const receive = entry({ outcomeHeader: 'on', handoff: { hand }, onHandlerError: () => undefined });
    expect(((await receive(request())) as Answer).headers[OUTCOME]).toBe(`${outcome}; handler-ms=0; key-id=0`);
  });

  it("tells what the handlers of on led to: an event of a type without one, and data its schema refused", async () => {
    const receive = entry({ outcomeHeader: 'on', onHandlerError: () => undefined, on: { 'call.missed': () => undefined }, schemas: { 'call.missed': z.object({ never: z.string() }) } } as Partial<PipelineOptions & SingleEndpoint>);
    expect(((await receive(request({ type: 'message.received' }))) as Answer).headers[OUTCOME]).toBe('unhandled; handler-ms=0; key-id=0');
    expect(((await receive(request({ type: 'call.missed' }))) as Answer).headers[OUTCOME]).toBe('invalid_event_data; handler-ms=0; key-id=0');
  });

  it('tells a duplicate with the secret that matched, and a refusal with its code alone', async () => {
    const store = new MemoryDedupStore();
    const receive = entry({ outcomeHeader: 'on', dedup: { store: store } }, () => undefined);
    await receive(request());
    expect(((await receive(request())) as Answer).headers[OUTCOME]).toBe('duplicate; key-id=0');
    expect(((await receive(request({ secret: OLD_SECRET }))) as Answer).headers[OUTCOME]).toBe('invalid_signature');
    store.close();
  });
});

describe('createPipeline: refusals and onError', () => {
  it('gives a refusal the default answer when onError answers no answer, and logs why', async () => {
    const log = vi.spyOn(console, 'error').mockImplementation(() => {});
    const receive = createPipeline<TestRequest, Answer>({ secret: SECRET, now, dedup: false }, platform(() => 'no answer'), single(() => undefined));
    expect(await receive(request({ secret: OLD_SECRET }))).toMatchObject({ status: 400, body: { error: { code: 'invalid_signature' } } });
    expect(log.mock.calls.at(-1)).toEqual(['svc-webhooks: onError failed (it answered no Answer); a request it left unanswered gets the default answer']);
  });

  it("names the request's id on onError's line, and the event's type once verified", async () => {
    const { logger, lines } = recordingLogger();
    const onError = platform(() => 'no answer');
    const store = new TestDedupStore();
    await store.begin(keyOf('evt_held'));
    const receive = createPipeline<TestRequest, Answer>({ secret: SECRET, now, dedup: { store }, logger }, onError, single(() => undefined));
    await receive(request({ id: 'evt_forged', secret: OLD_SECRET }));
    await receive(request({ id: 'evt_held', type: 'message.received' }));
    const unsigned = request();
    delete unsigned.headers['webhook-id'];
    await receive(unsigned);
    expect(lines.filter(([, { code }]) => code === 'on_error_failed').map(([, fields]) => fields)).toStrictEqual([
      { code: 'on_error_failed', id: 'evt_forged', errorClass: 'TypeError', errorMessage: 'it answered no Answer' },
      { code: 'on_error_failed', id: 'evt_held', type: 'message.received', errorClass: 'TypeError', errorMessage: 'it answered no Answer' },
      { code: 'on_error_failed', errorClass: 'TypeError', errorMessage: 'it answered no Answer' },
    ]);
  });

  it("answers a refusal with onError's answer, adding the refusal's headers it lacks and keeping its own", async () => {
    const store = new TestDedupStore();
    await store.begin(keyOf('evt_1'));
    const onError = (error: WebhookError) => new Answer(error.status, { 'x-own': 'yes' });
    const receive = createPipeline<TestRequest, Answer>({ secret: SECRET, now, dedup: { store: store, leaseMs: 30_000 } }, platform(onError), single(() => undefined));
    expect(await receive(request())).toEqual(new Answer(409, { 'retry-after': '30', 'x-own': 'yes' }));
  });

  it('gives a refusal the default answer, and logs the refusal alone, when there is no onError', async () => {
    const log = vi.spyOn(console, 'error').mockImplementation(() => {});
    const receive = entry({}, () => undefined);
    expect(await receive(request({ timestamp: 1 }))).toMatchObject({ status: 400 });
    expect(log.mock.calls).toEqual([
      [`svc-webhooks: the request with webhook-id "evt_1" was refused 400 timestamp_too_old (webhook-timestamp is ${NOW_SECONDS - 1} s in the past; the tolerance is 300 s)`],
    ]);
  });

  it('answers a refusal the body reading ended in, closing the connection on a body left unread', async () => {
    const receive = entry({}, () => undefined);
    expect(await receive(request({}, Promise.reject(tooLarge(10))))).toMatchObject({
      status: 413,
      headers: { connection: 'close' },
      body: { error: { code: 'payload_too_large' } },
    });
  });

  it("answers the platform's senderGone when the sender left mid-body, and passes on anything else the read rejects with", async () => {
    const receive = entry({}, () => undefined, platform(undefined, { senderGone: () => new Answer(499) }));
    expect(await receive(request({}, Promise.reject(new SenderGoneError())))).toEqual(new Answer(499));
    expect(await receive(request({}, Promise.reject(tooLarge(10))))).toMatchObject({ status: 413 });
    await expect(receive(request({}, Promise.reject(new Error('socket gone'))))).rejects.toThrow('socket gone');
    // Passed on as it was, even what is no Error at all: never read as a refusal.
    for (const thrown of [undefined, null, { code: 'payload_too_large' }]) {
      await expect(receive(request({}, Promise.reject(thrown as never)))).rejects.toBe(thrown);
    }
    // A platform without senderGone hears of the sender gone as a rejection of its own.
    await expect(entry({}, () => undefined)(request({}, Promise.reject(new SenderGoneError())))).rejects.toBeInstanceOf(SenderGoneError);
  });
});

describe('createPipeline: the log of refusals', () => {
  /** A receiver with `logger` on a clock the test moves, and the lines it was given. */
  function logged(options: Partial<PipelineOptions & SingleEndpoint> = {}, on = platform()) {
    const clock = { ms: now() };
    const { logger, lines } = recordingLogger();
    const receive = createPipeline<TestRequest, Answer>({ secret: SECRET, now: () => clock.ms, dedup: false, logger, ...options }, on, single(() => undefined));
    return { receive, lines, clock };
  }
  const forged = (id: string): TestRequest => request({ id, secret: OLD_SECRET });

  it("writes a refusal of the request's own as a warning: its code, the request's id as sent, the refusal's class and message", async () => {
    const { receive, lines } = logged();
    expect(await receive(forged('evt_forged'))).toMatchObject({ status: 400 });
    expect(lines).toStrictEqual([
      [
        'warn',
        { code: 'invalid_signature', id: 'evt_forged', errorClass: 'WebhookVerificationError', errorMessage: 'no v1 signature in webhook-signature matches the secret' },
        'the request with webhook-id "evt_forged" was refused 400 invalid_signature (no v1 signature in webhook-signature matches the secret)',
      ],
    ]);
  });

  it('writes one line per code a minute by the receiver\'s clock, the next one counting the refusals left out', async () => {
    const { receive, lines, clock } = logged();
    for (let index = 0; index < 5; index++) await receive(forged(`evt_${index}`));
    await receive(request({ id: 'evt_stale', timestamp: NOW_SECONDS - 600 }));
    clock.ms += REFUSAL_LOG_INTERVAL_MS - 1;
    await receive(forged('evt_5'));
    expect(lines.map(([, { code, id, unlogged }]) => [code, id, unlogged])).toEqual([
      ['invalid_signature', 'evt_0', undefined],
      ['timestamp_too_old', 'evt_stale', undefined],
    ]);
    clock.ms += 1;
    await receive(forged('evt_6'));
    await receive(forged('evt_7'));
    expect(lines.slice(2)).toStrictEqual([
      [
        'warn',
        { code: 'invalid_signature', id: 'evt_6', errorClass: 'WebhookVerificationError', errorMessage: 'no v1 signature in webhook-signature matches the secret', unlogged: 5 },
        'the request with webhook-id "evt_6" was refused 400 invalid_signature (no v1 signature in webhook-signature matches the secret); 5 more refused invalid_signature since the last line',
      ],
    ]);
  });

  it('keeps the spells of each receiver apart', async () => {
    const first = logged();
    const second = logged();
    await first.receive(forged('evt_a'));
    await second.receive(forged('evt_b'));
    expect([...first.lines, ...second.lines].map(([, { id }]) => id)).toEqual(['evt_a', 'evt_b']);
  });

  it('writes a request without a webhook-id without one, and its body refusals, a setup mistake (a 5xx) as an error', async () => {
    const parsed = new WebhookBodyError('body_already_parsed', 'something read the body before verification');
    const { receive, lines } = logged({}, platform(undefined, { body: (incoming) => (incoming.headers['x-parsed'] === undefined ? incoming.body : Promise.reject(parsed)) }));
    const unnamed = request();
    delete unnamed.headers['webhook-id'];
    await receive(unnamed);
    await receive(request({}, Promise.reject(tooLarge(10))));
    await receive({ ...request({ id: 'evt_parsed' }), headers: { ...request({ id: 'evt_parsed' }).headers, 'x-parsed': '1' } });
    expect(lines.map(([level, fields, message]) => [level, fields.code, fields.id, message])).toEqual([
      ['warn', 'missing_header', undefined, 'a request without a webhook-id was refused 400 missing_header (the webhook-id header is missing or empty)'],
      ['warn', 'payload_too_large', 'evt_1', 'the request with webhook-id "evt_1" was refused 413 payload_too_large (the body is larger than 10 bytes)'],
      ['error', 'body_already_parsed', 'evt_parsed', 'the request with webhook-id "evt_parsed" was refused 500 body_already_parsed (something read the body before verification)'],
    ]);
  });

  it("writes no refusal line for what is no fault of the request's, or has a line of its own: a duplicate, one in progress, a failing store", async () => {
    const store = new TestDedupStore();
    const { receive, lines } = logged({ dedup: { store, onError: () => undefined } });
    await receive(request({ id: 'evt_done' }));
    expect(await receive(request({ id: 'evt_done' }))).toMatchObject({ status: 200 });
    await store.begin(keyOf('evt_held'));
    expect(await receive(request({ id: 'evt_held' }))).toMatchObject({ status: 409 });
    store.failing = true;
    expect(await receive(request({ id: 'evt_down' }))).toMatchObject({ status: 503 });
    expect(lines).toEqual([]);
  });

  it("writes an unknown tenant's refusal; a failed secret lookup has its own line alone", async () => {
    const tenants = {
      of: (incoming: TestRequest) => incoming.headers['x-tenant'],
      secret: (tenant: string) => (tenant === 'down' ? Promise.reject(new Error('secrets down')) : undefined),
    };
    const { receive, lines } = logged({ secret: undefined, tenants } as never);
    const to = (tenant: string, id: string): TestRequest => {
      const sent = request({ id });
      return { ...sent, headers: { ...sent.headers, 'x-tenant': tenant } };
    };
    expect(await receive(to('nobody', 'evt_nobody'))).toMatchObject({ status: 404 });
    expect(await receive(to('down', 'evt_down'))).toMatchObject({ status: 503 });
    expect(lines.map(([level, { code, id }]) => [level, code, id])).toEqual([
      ['warn', 'unknown_tenant', 'evt_nobody'],
      ['warn', 'secret_unavailable', 'evt_down'],
    ]);
  });

  it('escapes and cuts a hostile id in the console line; the line holds no secret, signature or body', async () => {
    const log = vi.spyOn(console, 'error').mockImplementation(() => {});
    const hostile = `evt\u001b[2J\r\nsvc-webhooks: forged${'x'.repeat(8000)}`;
    const sent = forged(hostile);
    await entry({}, () => undefined)(sent);
    const [line] = log.mock.calls.map(([text]) => String(text));
    expect(line).toMatch(/^svc-webhooks: the request with webhook-id "evt\\u001b\[2J\\r\\nsvc-webhooks: forgedx+… was refused 400 invalid_signature/);
    expect(line!.length).toBeLessThan(400);
    expect(line).not.toContain('\n');
    for (const kept of [SECRET.slice('whsec_'.length), OLD_SECRET.slice('whsec_'.length), sent.headers['webhook-signature']!.slice(3), String(sent.body)]) expect(line).not.toContain(kept);
  });
});

describe('createPipeline: the claim', () => {
  it.each([
    ['completes', 200, { status: 200, body: { received: true, duplicate: true } }],
    ['releases', 503, new Answer(503)],
  ])("%s the claim by the status of the handler's answer", async (_settles, status, retried) => {
    const store = new MemoryDedupStore();
    const receive = entry({ dedup: { store: store } }, () => new Answer(status));
    expect(await receive(request())).toEqual(new Answer(status));
    expect(await receive(request())).toMatchObject(retried);
    store.close();
  });

  it('hands the settling to keepAlive, and settles by the status the route answered', async () => {
    const store = new TestDedupStore();
    const kept: Promise<void>[] = [];
    const routed: string[] = [];
    const on = platform(undefined, { keepAlive: (_request, work) => void kept.push(work), statusOf: () => 204 });
    const receive = entry({ dedup: { store: store } }, undefined, on, async (_request, { id }) => {
      routed.push(id);
      return 204;
    });
    expect(await receive(request())).toBeUndefined();
    expect(routed).toEqual(['evt_1']);
    expect(kept).toHaveLength(1);
    await kept[0];
    expect(await receive(request())).toMatchObject({ status: 200, body: { received: true, duplicate: true } });
  });

  it('leaves keepAlive nothing to keep when the store settled the claim at once, as MemoryDedupStore does', async () => {
    const store = new MemoryDedupStore();
    const kept: Promise<void>[] = [];
    const receive = entry({ dedup: { store: store } }, () => undefined, platform(undefined, { keepAlive: (_request, work) => void kept.push(work) }));
    expect(await receive(request())).toEqual(new Answer(204, {}, undefined));
    expect(kept).toEqual([]);
    expect(await receive(request())).toMatchObject({ status: 200, body: { received: true, duplicate: true } });
    store.close();
  });

  it('answers anyway when keepAlive throws, logs it once, and settles the claim all the same', async () => {
    const log = vi.spyOn(console, 'error').mockImplementation(() => {});
    const store = new TestDedupStore();
    const on = platform(undefined, {
      keepAlive: () => {
        throw new Error('waitUntil is gone');
      },
    });
    const receive = entry({ dedup: { store: store } }, () => undefined, on);
    expect(await receive(request())).toEqual(new Answer(204, {}, undefined));
    expect(log.mock.calls).toEqual([[`svc-webhooks: the platform's waitUntil threw (waitUntil is gone); the claim of event "evt_1" is settled without it`]]);
    expect(await receive(request())).toMatchObject({ status: 200 });

    // A logger of the entry's gets the line's fields.
    const { logger, lines } = recordingLogger();
    const logged = entry({ dedup: { store: new TestDedupStore() }, logger }, () => undefined, on);
    expect(await logged(request({ id: 'evt_kept', type: 'message.received' }))).toEqual(new Answer(204, {}, undefined));
    expect(lines).toStrictEqual([
      [
        'error',
        { code: 'wait_until_failed', id: 'evt_kept', type: 'message.received', errorClass: 'Error', errorMessage: 'waitUntil is gone' },
        `the platform's waitUntil threw (waitUntil is gone); the claim of event "evt_kept" is settled without it`,
      ],
    ]);
  });

  it('settles with no word when the platform has no keepAlive, as on Node', async () => {
    const { logger, lines } = recordingLogger();
    const receive = entry({ dedup: { store: new TestDedupStore() }, logger }, () => undefined);
    expect(await receive(request())).toEqual(new Answer(204, {}, undefined));
    expect(await receive(request())).toMatchObject({ status: 200 });
    expect(lines).toEqual([]);
  });
});

/** A pipeline with handlers, answering what it decided as it is: one call per delivery. */
function handlingReceiver<S extends EventSchemas>(options: Partial<ReceiverOptions> & HandlerOptions<S>) {
  const receive = createPipeline<SignedRequest, WebhookResponse>({ secret: SECRET, now, ...options } as unknown as PipelineOptions, decidedAnswers());
  return async (spec: RequestSpec = {}): Promise<WebhookResponse> => (await receive(signedRequest(spec)))!;
}

const quiet = { onHandlerError: () => {} };

describe('createPipeline: the handlers of on under the claim', () => {
  it('runs the handler under the claim, then completes it: a retry meanwhile gets 409, one after gets the duplicate 200', async () => {
    const dedup = new TestDedupStore();
    const during: unknown[] = [];
    const deliver = handlingReceiver({
      dedup: { store: dedup },
      on: {
        'call.missed': async () => {
          during.push(dedup.stateOf(keyOf('evt_1')), await deliver());
        },
      },
    });
    expect(await deliver()).toEqual({ status: 204, headers: {}, body: undefined });
    expect(during).toMatchObject(['leased', { status: 409, body: { error: { code: 'delivery_in_progress' } } }]);
    expect(dedup.stateOf(keyOf('evt_1'))).toBe('done');
    expect(await deliver()).toMatchObject({ status: 200, body: { received: true, duplicate: true } });
    expect(during).toHaveLength(2);
  });

  it('releases the claim when the handler throws, so the retry runs it again', async () => {
    const dedup = new TestDedupStore();
    const handler = vi.fn().mockRejectedValueOnce(new Error('db down')).mockResolvedValueOnce(undefined);
    const deliver = handlingReceiver({ dedup: { store: dedup }, on: { 'call.missed': handler }, ...quiet });
    expect(await deliver()).toMatchObject({ status: 500, body: { error: { code: 'handler_failed' } } });
    expect(dedup.stateOf(keyOf('evt_1'))).toBe('absent');
    expect(await deliver()).toMatchObject({ status: 204 });
    expect(handler).toHaveBeenCalledTimes(2);
    expect(dedup.stateOf(keyOf('evt_1'))).toBe('done');
  });

  it('releases the claim on a schema failure, so a fixed schema deployed before the retries end loses nothing', async () => {
    const dedup = new TestDedupStore();
    const handled: unknown[] = [];
    const on = { 'call.missed': (event: { data: { object: { id: string } } }) => void handled.push(event.data.object.id) };
    const tooStrict = z.object({ data: z.object({ object: z.object({ id: z.string().startsWith('call_') }) }) });
    const fixed = z.object({ data: z.object({ object: z.object({ id: z.string() }) }) });
    const before = handlingReceiver({ dedup: { store: dedup }, on, schemas: { 'call.missed': tooStrict }, ...quiet });
    expect(await before()).toMatchObject({ status: 422, body: { error: { code: 'invalid_event_data', paths: ['$.data.object.id'] } } });
    expect(dedup.stateOf(keyOf('evt_1'))).toBe('absent');
    const after = handlingReceiver({ dedup: { store: dedup }, on, schemas: { 'call.missed': fixed } });
    expect(await after()).toMatchObject({ status: 204 });
    expect(handled).toEqual(['obj_evt_1']);
  });

  it("completes unknown types under 'accept', releases them under 'reject'", async () => {
    const dedup = new TestDedupStore();
    const accept = handlingReceiver({ dedup: { store: dedup }, on: {} });
    expect(await accept({ id: 'evt_a', type: 'call.answered' })).toMatchObject({ status: 204 });
    expect(dedup.stateOf(keyOf('evt_a'))).toBe('done');
    const reject = handlingReceiver({ dedup: { store: dedup }, on: {}, unknownEvents: 'reject' });
    expect(await reject({ id: 'evt_r', type: 'call.answered' })).toMatchObject({ status: 422, body: { error: { code: 'unknown_event_type' } } });
    expect(dedup.stateOf(keyOf('evt_r'))).toBe('absent');
  });

  it('answers with dedup turned off: every delivery runs the handler', async () => {
    const handler = vi.fn();
    const deliver = handlingReceiver({ dedup: false, on: { 'call.missed': handler } });
    expect(await deliver()).toMatchObject({ status: 204 });
    expect(await deliver()).toMatchObject({ status: 204 });
    expect(handler).toHaveBeenCalledTimes(2);
  });

  it("keeps the handler's answer when the store then fails and dedup.onError throws", async () => {
    const dedup = new TestDedupStore();
    const deliver = handlingReceiver({
      dedup: { store: dedup, onError: () => {
        throw new Error('reporter down');
      } },
      on: {
        'call.missed': () => {
          dedup.failing = true;
        },
      },
    });
    expect(await deliver()).toMatchObject({ status: 204 });
  });
});

describe('createPipeline: the handlers of on and a slow store', () => {
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  /** A store whose complete() takes `ms`, and the time its delivery's answer took, once answered. */
  function slowStore(ms: number) {
    const dedup = new TestDedupStore();
    const complete = dedup.complete.bind(dedup);
    dedup.complete = async (id, token) => {
      await sleep(ms);
      return complete(id, token);
    };
    let answeredAfter: number | undefined;
    const started = Date.now();
    const answer = handlingReceiver({ dedup: { store: dedup }, on: { 'call.missed': () => {} } })().then((response) => {
      answeredAfter = Date.now() - started;
      return response;
    });
    return { dedup, answer, answeredAfter: () => answeredAfter };
  }

  it('answers once the store has recorded the outcome, so a retry then finds it done', async () => {
    const { dedup, answer, answeredAfter } = slowStore(100);
    await vi.advanceTimersByTimeAsync(99);
    expect(answeredAfter()).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(await answer).toMatchObject({ status: 204 });
    expect(answeredAfter()).toBe(100);
    expect(dedup.stateOf(keyOf('evt_1'))).toBe('done');
  });

  it('answers after 1 s when the store takes longer (a failing one retrying), and the store still records it', async () => {
    const { dedup, answer, answeredAfter } = slowStore(60_000);
    await vi.advanceTimersByTimeAsync(999);
    expect(answeredAfter()).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(await answer).toMatchObject({ status: 204 });
    expect(answeredAfter()).toBe(1000);
    expect(dedup.stateOf(keyOf('evt_1'))).toBe('leased');
    await vi.advanceTimersByTimeAsync(60_000);
    expect(dedup.stateOf(keyOf('evt_1'))).toBe('done');
  });

  it("leaves a route's request at once, since the route answered: the settle goes on in the background", async () => {
    const dedup = new TestDedupStore();
    const complete = dedup.complete.bind(dedup);
    dedup.complete = async (id, token) => {
      await sleep(60_000);
      return complete(id, token);
    };
    let left = false;
    const receive = entry({ dedup: { store: dedup } }, undefined, platform(undefined, { statusOf: () => 204 }), async () => 204);
    void receive(request()).then(() => (left = true));
    await vi.advanceTimersByTimeAsync(0);
    expect(left).toBe(true);
    expect(dedup.stateOf(keyOf('evt_1'))).toBe('leased');
    await vi.advanceTimersByTimeAsync(60_000);
    expect(dedup.stateOf(keyOf('evt_1'))).toBe('done');
  });
});

describe('createPipeline: a stale event (ordering)', () => {
  const OUTCOME = 'svc-webhooks-outcome';
  /** Version `second` (seconds past noon) of msg_1. */
  const version = (second: number): TestRequest => {
    const id = `evt_v${second}`;
    return request({ id, type: 'message.received', body: JSON.stringify({ id, type: 'message.received', timestamp: `2026-11-29T12:00:0${second}Z`, data: { object: { id: 'msg_1' } } }) });
  };
  const ordering = { version: (event: WebhookEvent) => event.timestamp };

  it('is answered 200 stale without running, told on the delivery channel, the outcome header and one warning', async () => {
    const { logger, lines } = recordingLogger();
    const heard = hearDeliveries();
    const ran: string[] = [];
    try {
      const receive = entry({ outcomeHeader: 'on', dedup: {}, ordering, logger }, (_event, { id }) => void ran.push(id));
      expect(((await receive(version(5))) as Answer).status).toBe(204);
      const stale = (await receive(version(4))) as Answer;
      expect([stale.status, stale.body, stale.headers[OUTCOME]]).toEqual([200, { received: true, stale: true }, 'stale; key-id=0']);
      expect(heard.traces.map(({ outcome }) => outcome)).toEqual(['processed', 'stale']);
    } finally {
      heard.stop();
    }
    expect(ran).toEqual(['evt_v5']);
    expect(lines).toEqual([
      ['warn', { code: 'stale_event', id: 'evt_v4', type: 'message.received', keyId: '0' }, 'event "evt_v4" of type "message.received" is older than one of its object processed before: skipped, and answered 200'],
    ]);
  });

  it('runs marked stale under staleEvents: run, its duplicate answered as one', async () => {
    const stale: Array<boolean | undefined> = [];
    const receive = createPipeline<TestRequest, Answer>({ secret: SECRET, now, ordering: { ...ordering, staleEvents: 'run' } }, platform(), {
      handler: () => undefined,
      shape,
      context: (_request, delivery: WebhookDelivery) => void stale.push(delivery.stale),
    });
    await receive(version(5));
    expect(((await receive(version(4))) as Answer).status).toBe(204);
    expect(((await receive(version(4))) as Answer).body).toEqual({ received: true, duplicate: true });
    expect(stale).toEqual([undefined, true]);
  });
});
