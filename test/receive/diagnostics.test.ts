/**
 * What the pipeline tells the diagnostics channels: one delivery message per
 * request once answered, with its outcome (every row of the outcome table),
 * the handler's runs on the tracing channel, and each failed store operation;
 * nothing is built while nobody listens.
 */
import { subscribe, tracingChannel, unsubscribe } from 'node:diagnostics_channel';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { WebhookVerificationError, type DedupStore } from '../../src/index.js';
import { tooLarge } from '../../src/core/payload.js';
import { DELIVERY_CHANNEL, HANDLER_CHANNEL, outcomeOf, STORE_CHANNEL, type DeliveryMessage, type StoreMessage } from '../../src/receive/diagnostics.js';
import { createPipeline, type EntryOptions, type Platform } from '../../src/receive/pipeline.js';
import type { WebhookResponse } from '../../src/receive/responses.js';
import { NOW_SECONDS, now, OLD_SECRET, SECRET, signedRequest, type RequestSpec } from '../helpers/signed-request.js';
import { TestDedupStore } from '../helpers/test-dedup-store.js';

interface TestRequest {
  readonly body: string | Promise<string>;
  readonly headers: Record<string, string>;
}

/** A platform answering what was decided as it is, or a route answering `routeStatus`. */
function platform(routeStatus?: number): Platform<TestRequest, WebhookResponse> {
  return {
    entry: 'lambda',
    body: (request) => request.body,
    headers: (request) => request.headers,
    userRequest: (request) => request,
    send: (_request, response) => response,
    statusOf: (_request, response) => response?.status ?? routeStatus!,
    ...(routeStatus !== undefined && { route: async () => routeStatus }),
  };
}

const messages: unknown[] = [];
const heard = (message: unknown): void => void messages.push(message);

afterEach(() => {
  unsubscribe(DELIVERY_CHANNEL, heard);
  unsubscribe(STORE_CHANNEL, heard);
  messages.length = 0;
  vi.restoreAllMocks();
});

async function deliver(options: Partial<EntryOptions>, spec: RequestSpec = {}, routeStatus?: number, body?: Promise<string>) {
  const receive = createPipeline<TestRequest, WebhookResponse>({ secret: SECRET, now, dedup: false, ...options }, platform(routeStatus));
  const signed = signedRequest(spec);
  return receive({ body: body ?? signed.body, headers: signed.headers });
}

describe('the delivery channel', () => {
  it('tells one message per request, once answered, with what was verified and how long it took', async () => {
    subscribe(DELIVERY_CHANNEL, heard);
    await deliver({ on: { 'call.missed': () => undefined } }, { timestamp: NOW_SECONDS - 42 });
    expect(messages).toEqual([
      { entry: 'lambda', status: 204, outcome: 'processed', id: 'evt_1', type: 'call.missed', keyId: '0', skewSeconds: 42, durationMs: expect.any(Number) },
    ]);
    expect((messages[0] as DeliveryMessage).durationMs).toBeGreaterThanOrEqual(0);
  });

  it('tells the skew of a refused request whose timestamp parsed, and never its unverified id or type', async () => {
    subscribe(DELIVERY_CHANNEL, heard);
    await deliver({ on: {} }, { secret: OLD_SECRET, timestamp: NOW_SECONDS + 7 });
    await deliver({ on: {} }, { timestamp: NOW_SECONDS - 400 });
    expect(messages).toEqual([
      { entry: 'lambda', status: 400, outcome: 'invalid_signature', skewSeconds: -7, durationMs: expect.any(Number) },
      { entry: 'lambda', status: 400, outcome: 'timestamp_too_old', skewSeconds: 400, durationMs: expect.any(Number) },
    ]);
  });

  it('tells no skew for a timestamp that does not parse', async () => {
    subscribe(DELIVERY_CHANNEL, heard);
    const receive = createPipeline<TestRequest, WebhookResponse>({ secret: SECRET, now, dedup: false, on: {} }, platform());
    const { body, headers } = signedRequest();
    await receive({ body, headers: { ...headers, 'webhook-timestamp': '12.5' } });
    expect(messages).toEqual([{ entry: 'lambda', status: 400, outcome: 'invalid_timestamp', durationMs: expect.any(Number) }]);
  });

  it.each<[string, Partial<EntryOptions>, RequestSpec, string, number]>([
    ['a handler that ran', { on: { 'call.missed': () => undefined } }, {}, 'processed', 204],
    ['a known type without a handler', { on: {} }, {}, 'unhandled', 204],
    ["an unknown type under onUnknown: 'accept'", { on: {} }, { type: 'call.answered' }, 'unhandled', 204],
    ['an unknown type run by an onUnknown function', { on: {}, onUnknown: () => undefined }, { type: 'call.answered' }, 'processed', 204],
    ["an unknown type under onUnknown: 'reject'", { on: {}, onUnknown: 'reject' as const }, { type: 'call.answered' }, 'unknown_event_type', 422],
    ['a handler that threw', { on: { 'call.missed': () => Promise.reject(new Error('x')) }, onHandlerError: () => {} }, {}, 'handler_failed', 500],
  ])('tells %s as %s', async (_name, options, spec, outcome, status) => {
    subscribe(DELIVERY_CHANNEL, heard);
    await deliver(options, spec);
    expect(messages).toMatchObject([{ outcome, status }]);
  });

  it.each([
    [204, 'processed'],
    [503, 'failed'],
  ])('tells a route that answered %s as %s', async (status, outcome) => {
    subscribe(DELIVERY_CHANNEL, heard);
    await deliver({}, {}, status);
    expect(messages).toMatchObject([{ status, outcome, id: 'evt_1' }]);
  });

  it('tells a duplicate, a delivery in progress and a failing store, each with its id', async () => {
    subscribe(DELIVERY_CHANNEL, heard);
    const dedup = new TestDedupStore();
    const options = { dedup, on: { 'call.missed': () => undefined } };
    await deliver(options);
    await deliver(options);
    await dedup.begin('evt_2');
    await deliver(options, { id: 'evt_2' });
    const down: DedupStore = { ...dedup, begin: () => Promise.reject(new Error('down')), complete: dedup.complete, release: dedup.release, renew: dedup.renew };
    await deliver({ ...options, dedup: down, onStoreError: () => undefined }, { id: 'evt_3' });
    expect(messages).toMatchObject([
      { outcome: 'processed', status: 204, id: 'evt_1' },
      { outcome: 'duplicate', status: 200, id: 'evt_1' },
      { outcome: 'in_progress', status: 409, id: 'evt_2' },
      { outcome: 'dedup_unavailable', status: 503, id: 'evt_3' },
    ]);
  });

  it('tells a body refusal by its code, with no id', async () => {
    subscribe(DELIVERY_CHANNEL, heard);
    await deliver({ on: {} }, {}, undefined, Promise.reject(tooLarge(10)));
    expect(messages).toEqual([{ entry: 'lambda', status: 413, outcome: 'payload_too_large', skewSeconds: 0, durationMs: expect.any(Number) }]);
  });

  it('builds nothing while nobody listens: the clock is not even read', async () => {
    const clock = vi.spyOn(performance, 'now');
    await deliver({ on: { 'call.missed': () => undefined } });
    expect(clock).not.toHaveBeenCalled();
    expect(messages).toEqual([]);
  });
});

describe('outcomeOf', () => {
  it('names a refusal by its code, in_progress for a delivery in progress, and a 2xx by whether code ran', () => {
    expect(outcomeOf(409, new WebhookVerificationError('delivery_in_progress', 'x'), true)).toBe('in_progress');
    expect(outcomeOf(503, new WebhookVerificationError('dedup_unavailable', 'x'), true)).toBe('dedup_unavailable');
    expect(outcomeOf(299, undefined, true)).toBe('processed');
    expect(outcomeOf(200, undefined, false)).toBe('unhandled');
    expect(outcomeOf(199, undefined, true)).toBe('failed');
    expect(outcomeOf(300, undefined, true)).toBe('failed');
  });
});

describe('the handler tracing channel', () => {
  it("wraps each run of the user's code, its context naming the delivery, and sees a failure as an error", async () => {
    const events: Array<[string, unknown]> = [];
    const record = (name: string) => (context: unknown) => void events.push([name, { ...(context as object) }]);
    const handlers = { start: record('start'), end: record('end'), asyncStart: record('asyncStart'), asyncEnd: record('asyncEnd'), error: record('error') };
    const channel = tracingChannel(HANDLER_CHANNEL);
    channel.subscribe(handlers);
    try {
      await deliver({ on: { 'call.missed': () => undefined } });
      expect(events.map(([name]) => name)).toEqual(['start', 'end', 'asyncStart', 'asyncEnd']);
      expect(events[0]![1]).toEqual({ entry: 'lambda', id: 'evt_1', type: 'call.missed', keyId: '0' });
      events.length = 0;
      await deliver({}, {}, 500);
      expect(events.map(([name]) => name)).toEqual(['start', 'end', 'asyncStart', 'asyncEnd']);
      expect(events[3]![1]).toMatchObject({ result: { routed: true, status: 500 } });
    } finally {
      channel.unsubscribe(handlers);
    }
  });
});

describe('the store channel', () => {
  it('tells every failed store operation with its attempt, a failed begin included', async () => {
    subscribe(STORE_CHANNEL, heard);
    const dedup = new TestDedupStore();
    const complete = dedup.complete.bind(dedup);
    let failures = 2;
    dedup.complete = (id: string, token: string) => (failures-- > 0 ? Promise.reject(new Error(`complete failed ${failures}`)) : complete(id, token));
    await deliver({ dedup, on: { 'call.missed': () => undefined } });
    const down = new Error('down');
    dedup.begin = () => Promise.reject(down);
    await deliver({ dedup, on: {}, onStoreError: () => undefined }, { id: 'evt_2' });
    expect(messages).toEqual([
      { operation: 'complete', id: 'evt_1', attempt: 1, error: new Error('complete failed 1') },
      { operation: 'complete', id: 'evt_1', attempt: 2, error: new Error('complete failed 0') },
      { operation: 'begin', id: 'evt_2', attempt: 1, error: down },
    ] satisfies StoreMessage[]);
  });
});
