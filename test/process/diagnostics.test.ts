/**
 * What the pipeline tells the diagnostics channels: a tracing channel around
 * each delivery (its context filled in as the request goes: the delivery once
 * verified, the answer and its outcome by asyncEnd; every row of the outcome
 * table), the user's code on the handler channel pointing to its delivery's
 * trace, each failed store operation, and each failed secret lookup; nothing
 * is built while nobody listens.
 */
import { subscribe, tracingChannel, unsubscribe } from 'node:diagnostics_channel';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import type { DedupStore } from '../../src/index.js';
import { tooLarge } from '../../src/core/payload.js';
import {
  DELIVERY_CHANNEL,
  HANDLER_CHANNEL,
  SECRET_LOOKUP_CHANNEL,
  STORE_CHANNEL,
  type DeliveryTrace,
  type HandlerTrace,
  type SecretLookupMessage,
  type StoreMessage,
} from '../../src/process/diagnostics.js';
import { createPipeline, type PipelineOptions } from '../../src/receive/pipeline.js';
import type { SingleEndpoint } from '../../src/receive/receiver.js';
import type { Platform } from '../../src/receive/platform.js';
import type { WebhookResponse } from '../../src/receive/responses.js';
import { deliveryOf, keyOf, NOW_SECONDS, now, OLD_SECRET, SECRET, signedRequest, type RequestSpec } from '../helpers/signed-request.js';
import { TestDedupStore } from '../helpers/test-dedup-store.js';

interface TestRequest {
  readonly body: string | Promise<string>;
  readonly headers: Record<string, string>;
}

/** A platform answering what was decided as it is. */
const platform: Platform<TestRequest, WebhookResponse> = {
  entry: 'lambda',
  body: (request) => request.body,
  headers: (request) => request.headers,
  userRequest: (request) => request,
  send: (_request, response) => response,
  statusOf: (_request, response) => response!.status,
};

/** Records the tracing channel's events by name, each with a copy of its context then; `contexts` keeps the objects themselves. */
function recorder() {
  const events: Array<[string, Record<string, unknown>]> = [];
  const contexts: object[] = [];
  const record = (name: string) => (context: unknown) => {
    events.push([name, { ...(context as object) }]);
    contexts.push(context as object);
  };
  return { events, contexts, handlers: { start: record('start'), end: record('end'), asyncStart: record('asyncStart'), asyncEnd: record('asyncEnd'), error: record('error') } };
}

const deliveryChannel = tracingChannel(DELIVERY_CHANNEL);
const handlerChannel = tracingChannel(HANDLER_CHANNEL);
const messages: unknown[] = [];
const heard = (message: unknown): void => void messages.push(message);
const listening: Array<() => void> = [];

/** The delivery channel's traces as they are at asyncEnd, one per request, filled in as requests are answered. */
function answeredTraces(): DeliveryTrace[] {
  const traces: DeliveryTrace[] = [];
  const none = (): void => undefined;
  const handlers = { start: none, end: none, asyncStart: none, asyncEnd: (context: unknown) => void traces.push({ ...(context as DeliveryTrace) }), error: none };
  deliveryChannel.subscribe(handlers);
  listening.push(() => deliveryChannel.unsubscribe(handlers));
  return traces;
}

afterEach(() => {
  for (const stop of listening.splice(0)) stop();
  unsubscribe(STORE_CHANNEL, heard);
  unsubscribe(SECRET_LOOKUP_CHANNEL, heard);
  messages.length = 0;
  vi.restoreAllMocks();
});

/** Delivers `spec` through a pipeline of `options`, with `runner`'s route where given. */
async function deliver(options: Partial<PipelineOptions>, spec: RequestSpec = {}, route?: number, body?: Promise<string>) {
  const runner = route === undefined ? undefined : { route: async () => route };
  const routed: Platform<TestRequest, WebhookResponse> = route === undefined ? platform : { ...platform, statusOf: (_request, answer) => answer?.status ?? route };
  // The test secret, unless the options give tenants (with `secret: undefined`).
  const receive = createPipeline<TestRequest, WebhookResponse>({ secret: SECRET, now, dedup: false, ...options } as PipelineOptions, routed, runner);
  const signed = signedRequest(spec);
  return receive({ body: body ?? signed.body, headers: signed.headers });
}

describe('the delivery tracing channel', () => {
  it('traces each request from the start of its handling to its answer, on one context object it fills in', async () => {
    const { events, contexts, handlers } = recorder();
    deliveryChannel.subscribe(handlers);
    try {
      await deliver({ on: { 'call.missed': () => undefined } }, { timestamp: NOW_SECONDS - 42 });
    } finally {
      deliveryChannel.unsubscribe(handlers);
    }
    expect(events.map(([name]) => name)).toEqual(['start', 'end', 'asyncStart', 'asyncEnd']);
    expect(events[0]![1]).toEqual({ entry: 'lambda' });
    const delivery = deliveryOf({ timestamp: NOW_SECONDS - 42 });
    expect(events[3]![1]).toEqual({ entry: 'lambda', delivery, status: 204, outcome: 'processed', skewMs: 42_000, id: 'evt_1', result: expect.anything() });
    expect(new Set(contexts).size).toBe(1);
  });

  it('tells the skew and the webhook-id as sent of a refused request, and never its unverified delivery', async () => {
    const traces = answeredTraces();
    await deliver({ on: {} }, { id: 'evt_forged', secret: OLD_SECRET, timestamp: NOW_SECONDS + 7 });
    await deliver({ on: {} }, { id: 'evt_stale', timestamp: NOW_SECONDS - 400 });
    expect(traces.map(({ status, outcome, skewMs, id, delivery }) => ({ status, outcome, skewMs, id, delivery }))).toEqual([
      { status: 400, outcome: 'invalid_signature', skewMs: -7_000, id: 'evt_forged', delivery: undefined },
      { status: 400, outcome: 'timestamp_too_old', skewMs: 400_000, id: 'evt_stale', delivery: undefined },
    ]);
  });

  it('tells no id for a request without a webhook-id', async () => {
    const traces = answeredTraces();
    const receive = createPipeline<TestRequest, WebhookResponse>({ secret: SECRET, now, dedup: false, on: {} }, platform);
    const { body, headers } = signedRequest();
    const { 'webhook-id': _id, ...unnamed } = headers;
    await receive({ body, headers: unnamed });
    expect(traces).toMatchObject([{ status: 400, outcome: 'missing_header' }]);
    expect('id' in traces[0]!).toBe(false);
  });

  it('tells no skew for a timestamp that does not parse', async () => {
    const traces = answeredTraces();
    const receive = createPipeline<TestRequest, WebhookResponse>({ secret: SECRET, now, dedup: false, on: {} }, platform);
    const { body, headers } = signedRequest();
    await receive({ body, headers: { ...headers, 'webhook-timestamp': '12.5' } });
    expect(traces).toMatchObject([{ status: 400, outcome: 'invalid_timestamp' }]);
    expect('skewMs' in traces[0]!).toBe(false);
  });

  it.each<[string, Partial<PipelineOptions & SingleEndpoint>, RequestSpec, string, number]>([
    ['a handler that ran', { on: { 'call.missed': () => undefined } }, {}, 'processed', 204],
    ['a known type without a handler', { on: {} }, {}, 'unhandled', 204],
    ["an unknown type under unknownEvents: 'accept'", { on: {} }, { type: 'call.answered' }, 'unhandled', 204],
    ['an unknown type run by onUnknownEvent', { on: {}, onUnknownEvent: () => undefined }, { type: 'call.answered' }, 'processed', 204],
    ["an unknown type under unknownEvents: 'reject'", { on: {}, unknownEvents: 'reject' as const }, { type: 'call.answered' }, 'unknown_event_type', 422],
    ['a handler that threw', { on: { 'call.missed': () => Promise.reject(new Error('x')) }, onHandlerError: () => {} }, {}, 'handler_failed', 500],
    ['a handoff the queue recorded', { handoff: { hand: async () => undefined } }, {}, 'queued', 202],
    ['a handoff the queue had', { handoff: { hand: async () => 'duplicate' as const } }, {}, 'duplicate', 200],
    ['a handoff the queue failed', { handoff: { hand: () => Promise.reject(new Error('x')) }, onHandlerError: () => {} }, {}, 'handoff_failed', 503],
  ])('tells %s as %s', async (_name, options, spec, outcome, status) => {
    const traces = answeredTraces();
    await deliver(options, spec);
    expect(traces).toMatchObject([{ outcome, status }]);
  });

  it.each([
    [204, 'processed'],
    [503, 'failed'],
  ])('tells a route that answered %s as %s', async (status, outcome) => {
    const traces = answeredTraces();
    await deliver({}, {}, status);
    expect(traces).toMatchObject([{ status, outcome, delivery: deliveryOf() }]);
  });

  it('tells a duplicate, a delivery in progress and a failing store, each with its delivery', async () => {
    const traces = answeredTraces();
    const dedup = new TestDedupStore();
    const options = { dedup: { store: dedup }, on: { 'call.missed': () => undefined } };
    await deliver(options);
    await deliver(options);
    await dedup.begin(keyOf('evt_2'));
    await deliver(options, { id: 'evt_2' });
    const down: DedupStore = { begin: () => Promise.reject(new Error('down')), complete: dedup.complete, release: dedup.release, renew: dedup.renew };
    await deliver({ ...options, dedup: { store: down, onError: () => undefined } }, { id: 'evt_3' });
    expect(traces).toMatchObject([
      { outcome: 'processed', status: 204, delivery: deliveryOf() },
      { outcome: 'duplicate', status: 200, delivery: deliveryOf() },
      { outcome: 'in_progress', status: 409, delivery: deliveryOf({ id: 'evt_2' }) },
      { outcome: 'dedup_unavailable', status: 503, delivery: deliveryOf({ id: 'evt_3' }) },
    ]);
  });

  it("calls a route's answer processed from 200 to 299 alone", async () => {
    const traces = answeredTraces();
    for (const status of [199, 200, 299, 300]) await deliver({}, { id: `evt_${status}` }, status);
    expect(traces.map(({ status, outcome }) => [status, outcome])).toEqual([
      [199, 'failed'],
      [200, 'processed'],
      [299, 'processed'],
      [300, 'failed'],
    ]);
  });

  it('tells a body refusal by its code, with no delivery', async () => {
    const traces = answeredTraces();
    await deliver({ on: {} }, {}, undefined, Promise.reject(tooLarge(10)));
    expect(traces).toEqual([{ entry: 'lambda', status: 413, outcome: 'payload_too_large', skewMs: 0, id: 'evt_1', result: expect.anything() }]);
  });

  it('builds nothing while nobody listens: not a context, and the clock of the skew is not read', async () => {
    const clock = vi.fn(now);
    const receive = createPipeline<TestRequest, WebhookResponse>({ secret: SECRET, now: clock, dedup: false, on: {} }, platform);
    await receive(signedRequest());
    // Once: the verification's own check of the timestamp.
    expect(clock).toHaveBeenCalledTimes(1);
  });
});

describe('the handler tracing channel', () => {
  it("wraps each run of the user's code, its context the delivery, its trace and the status it led to", async () => {
    const { events, contexts, handlers } = recorder();
    handlerChannel.subscribe(handlers);
    const delivered = recorder();
    deliveryChannel.subscribe(delivered.handlers);
    try {
      await deliver({ on: { 'call.missed': () => undefined } });
      expect(events.map(([name]) => name)).toEqual(['start', 'end', 'asyncStart', 'asyncEnd']);
      expect(events[0]![1]).toEqual({ entry: 'lambda', delivery: deliveryOf(), trace: delivered.contexts[0] });
      expect((contexts[3] as HandlerTrace).status).toBe(204);
      expect(contexts[3]).not.toHaveProperty('thrown');
      events.length = 0;
      await deliver({}, {}, 500);
      expect(events.map(([name]) => name)).toEqual(['start', 'end', 'asyncStart', 'asyncEnd']);
      expect(events[3]![1]).toMatchObject({ status: 500, failed: true });
      expect(events[3]![1]).not.toHaveProperty('thrown');
    } finally {
      handlerChannel.unsubscribe(handlers);
      deliveryChannel.unsubscribe(delivered.handlers);
    }
  });

  it('tells what a handler threw, as it threw it, at asyncEnd: never for a schema failure', async () => {
    const { events, handlers } = recorder();
    handlerChannel.subscribe(handlers);
    try {
      const broken = new RangeError('CRM rejected message sms_boom');
      await deliver({ on: { 'call.missed': () => Promise.reject(broken) }, onHandlerError: () => {} });
      expect(events[3]![1]).toMatchObject({ status: 500, failed: true, thrown: broken });
      await deliver({ on: { 'call.missed': () => undefined }, schemas: { 'call.missed': z.object({ type: z.literal('call.answered') }) }, onHandlerError: () => {} });
      expect(events[7]![1]).toMatchObject({ status: 422 });
      expect(events[7]![1]).not.toHaveProperty('thrown');
    } finally {
      handlerChannel.unsubscribe(handlers);
    }
  });

  it('makes a trace for its context even while nobody listens on the delivery channel, and traces no type nobody handles', async () => {
    const { events, handlers } = recorder();
    handlerChannel.subscribe(handlers);
    try {
      await deliver({ on: { 'call.missed': () => undefined } });
      expect(events[0]![1]).toMatchObject({ trace: { entry: 'lambda' } });
      events.length = 0;
      await deliver({ on: { 'call.missed': () => undefined } }, { type: 'webhook.test' });
      expect(events).toEqual([]);
    } finally {
      handlerChannel.unsubscribe(handlers);
    }
  });
});

describe('the store channel', () => {
  it('tells every failed store operation with its key and attempt, a failed begin included', async () => {
    subscribe(STORE_CHANNEL, heard);
    const dedup = new TestDedupStore();
    const complete = dedup.complete.bind(dedup);
    let failures = 2;
    dedup.complete = (id: string, token: string) => (failures-- > 0 ? Promise.reject(new Error(`complete failed ${failures}`)) : complete(id, token));
    await deliver({ dedup: { store: dedup }, on: { 'call.missed': () => undefined } });
    const down = new Error('down');
    dedup.begin = () => Promise.reject(down);
    await deliver({ dedup: { store: dedup, onError: () => undefined }, on: {} }, { id: 'evt_2' });
    expect(messages).toEqual([
      { operation: 'complete', key: keyOf('evt_1'), attempt: 1, error: new Error('complete failed 1') },
      { operation: 'complete', key: keyOf('evt_1'), attempt: 2, error: new Error('complete failed 0') },
      { operation: 'begin', key: keyOf('evt_2'), attempt: 1, error: down },
    ] satisfies StoreMessage[]);
  });
});

describe('the secret lookup channel', () => {
  it('tells a failed lookup with its tenant and the unverified id, and a tenant function that threw without a tenant, never on the store channel', async () => {
    subscribe(SECRET_LOOKUP_CHANNEL, heard);
    const stored: unknown[] = [];
    const onStore = (message: unknown): void => void stored.push(message);
    subscribe(STORE_CHANNEL, onStore);
    try {
      const down = new Error('secrets down');
      const threw = new Error('no params');
      const tenants = { onLookupError: () => undefined, secret: () => Promise.reject(down) };
      await deliver({ on: {}, secret: undefined, tenants: { ...tenants, of: () => 'acme' } }, { id: 'evt_4' });
      await deliver({
        on: {},
        secret: undefined,
        tenants: {
          ...tenants,
          of: () => {
            throw threw;
          },
        },
      });
      expect(messages).toEqual([
        { id: 'evt_4', tenant: 'acme', error: down },
        { id: 'evt_1', error: threw },
      ] satisfies SecretLookupMessage[]);
      expect(stored).toEqual([]);
    } finally {
      unsubscribe(STORE_CHANNEL, onStore);
    }
  });
});
