/**
 * instrumentWebhooks over real HTTP on all five entries, recorded by the
 * OpenTelemetry SDK's in-memory readers: the counter, the histograms and the
 * spans of every outcome a receiver with handlers gives, which secret
 * matched, failed secret lookups, and nothing once stopped. Each delivery's
 * spans are its own, however many deliveries of one event id (or of one id
 * to many tenants) run at once.
 */
import { HttpRequest, InvocationContext } from '@azure/functions';
import { context, propagation, ROOT_CONTEXT, SpanStatusCode, trace, type Baggage, type HrTime } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core';
import { AggregationTemporality, MeterProvider, MetricReader, type DataPoint, type Histogram } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import express from 'express';
import Fastify, { type FastifyPluginAsync } from 'fastify';
import { H3, toNodeHandler } from 'h3';
import { Hono } from 'hono';
import { Buffer } from 'node:buffer';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { verifyWebhook as azureWebhook } from '../../adapters/azure.js';
import { verifyWebhook as expressWebhook } from '../../adapters/express.js';
import { verifyWebhook as fastifyWebhook } from '../../adapters/fastify.js';
import { verifyWebhook as fetchWebhook } from '../../adapters/fetch.js';
import { verifyWebhook as h3Webhook } from '../../adapters/h3.js';
import { verifyWebhook as honoWebhook } from '../../adapters/hono.js';
import { verifyWebhook as lambdaWebhook } from '../../adapters/lambda.js';
import { instrumentWebhooks, type WebhookInstrumentation } from '../../adapters/otel.js';
import type { EntryName, EventHandlers, Handoff, SecretResolver } from '../../src/index.js';
import { RouteSpy } from '../helpers/adapter-contract.js';
import { expectOptionMistake } from '../helpers/option-mistake.js';
import { uncaughtDuring } from '../helpers/uncaught.js';
import {
  serveAzure,
  serveExpress,
  serveExpressHandlers,
  serveFastify,
  serveFastifyHandlers,
  serveFetch,
  serveH3,
  serveHono,
  serveHonoHandlers,
  serveLambda,
  type ServedApp,
} from '../helpers/adapter-servers.js';
import { keyOf, NOW_SECONDS, now, OLD_SECRET, SECRET, signedRequest, type RequestSpec } from '../helpers/signed-request.js';
import { serveNode } from '../helpers/http-harness.js';
import { lambdaContext, lambdaEvent } from '../helpers/lambda-events.js';
import { RawConnection } from '../helpers/raw-http.js';
import { TENANT_SERVERS } from '../helpers/tenant-servers.js';
import { TestDedupStore } from '../helpers/test-dedup-store.js';

/** A reader the test collects from when it likes. */
class CollectingReader extends MetricReader {
  constructor() {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE });
  }
  protected override onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
  protected override onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}

const reader = new CollectingReader();
const meterProvider = new MeterProvider({ readers: [reader] });
const spans = new InMemorySpanExporter();
const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });

/** The description of instrument `name`, once it recorded something. */
async function descriptionOf(name: string): Promise<string | undefined> {
  const { resourceMetrics } = await reader.collect();
  return resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics).find((metric) => metric.descriptor.name === name)?.descriptor.description;
}

/** The data points of `name`, as plain attributes and values. */
async function points(name: string): Promise<Array<DataPoint<unknown>>> {
  const { resourceMetrics } = await reader.collect();
  const named = resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics).filter((metric) => metric.descriptor.name === name);
  return named.flatMap((metric) => metric.dataPoints as Array<DataPoint<unknown>>);
}

const handled: string[] = [];
const on = {
  'call.missed': (_event: unknown, { id }: { id: string }) => void handled.push(id),
  'message.received': (): Promise<void> => Promise.reject(new Error('handler down')),
};
const quiet = { onHandlerError: () => undefined };

type Serve = (dedup: TestDedupStore) => Promise<ServedApp>;
const entries: Array<[EntryName, Serve]> = [
  ['express', (dedup) => serveExpressHandlers({ secret: [SECRET, { id: 'next', secret: OLD_SECRET }], now, dedup: { store: dedup, onError: () => undefined }, on, ...quiet })],
  ['hono', (dedup) => serveHonoHandlers({ secret: [SECRET, { id: 'next', secret: OLD_SECRET }], now, dedup: { store: dedup, onError: () => undefined }, on, ...quiet })],
  ['fastify', (dedup) => serveFastifyHandlers({ secret: [SECRET, { id: 'next', secret: OLD_SECRET }], now, dedup: { store: dedup, onError: () => undefined }, on, ...quiet })],
  ['fetch', (dedup) => serveFetch(fetchWebhook({ secret: [SECRET, { id: 'next', secret: OLD_SECRET }], now, dedup: { store: dedup, onError: () => undefined }, on, ...quiet }))],
  ['lambda', (dedup) => serveLambda('http-api', lambdaWebhook({ secret: [SECRET, { id: 'next', secret: OLD_SECRET }], now, dedup: { store: dedup, onError: () => undefined }, on, ...quiet }))],
  ['azure', (dedup) => serveAzure(azureWebhook({ secret: [SECRET, { id: 'next', secret: OLD_SECRET }], now, dedup: { store: dedup, onError: () => undefined }, on, ...quiet }))],
  ['h3', (dedup) => serveH3(h3Webhook({ secret: [SECRET, { id: 'next', secret: OLD_SECRET }], now, dedup: { store: dedup, onError: () => undefined }, on, ...quiet }))],
];

describe.each(entries)('instrumentWebhooks on the %s entry, over HTTP', (entry, serve) => {
  let app: ServedApp;
  let dedup: TestDedupStore;
  let instrumentation: WebhookInstrumentation;
  let sent = 0;

  beforeAll(async () => {
    dedup = new TestDedupStore();
    app = await serve(dedup);
  });
  afterAll(() => app.close());
  beforeEach(() => {
    instrumentation = instrumentWebhooks({ meterProvider, tracerProvider });
    spans.reset();
  });
  afterEach(() => instrumentation.stop());

  /** Posts a request; each test's ids are its own. */
  async function post(spec: RequestSpec = {}, extraHeaders: Record<string, string> = {}): Promise<number> {
    const { body, headers } = signedRequest(spec);
    const response = await fetch(`${app.url}/webhooks`, { method: 'POST', body, headers: { ...headers, ...extraHeaders } });
    await response.arrayBuffer();
    return response.status;
  }
  const id = (): string => `evt_${entry}_${++sent}`;

  /** The counter's value for these attributes, so far. */
  async function counted(attributes: Record<string, unknown>): Promise<number> {
    const matching = (await points('webhook.deliveries')).filter((point) => Object.entries(attributes).every(([key, value]) => point.attributes[key] === value));
    return matching.reduce((sum, point) => sum + (point.value as number), 0);
  }

  it.each<[string, (id: string) => Promise<unknown>, string, number]>([
    ['a handled event', (id) => post({ id, type: 'call.missed' }), 'processed', 204],
    ['a known type without a handler', (id) => post({ id, type: 'webhook.test' }), 'unhandled', 204],
    ['a handler that threw', (id) => post({ id, type: 'message.received' }), 'handler_failed', 500],
    ['a forged signature', (id) => post({ id, secret: `whsec_${Buffer.from('forged-forged-forged-forged-1234').toString('base64')}` }), 'invalid_signature', 400],
    ['a stale timestamp', (id) => post({ id, timestamp: NOW_SECONDS - 600 }), 'timestamp_too_old', 400],
  ])('counts %s as %s, with its status, and spans it', async (_name, send, outcome, status) => {
    const before = await counted({ 'webhook.entry': entry, 'webhook.outcome': outcome });
    const eventId = id();
    await send(eventId);
    expect(await counted({ 'webhook.entry': entry, 'webhook.outcome': outcome, 'http.response.status_code': status })).toBe(before + 1);
    const verified = outcome !== 'invalid_signature' && outcome !== 'timestamp_too_old';
    const delivery = spans.getFinishedSpans().find((span) => span.name.startsWith('webhook receive'));
    expect(delivery?.attributes).toMatchObject({ 'webhook.outcome': outcome, 'webhook.entry': entry, 'http.response.status_code': status });
    expect(delivery?.name).toBe(verified ? `webhook receive ${delivery?.attributes['webhook.event.type']}` : 'webhook receive');
    expect(delivery?.status.code).toBe(status >= 500 ? 2 : 0);
    // Found by the event's id, a refused request's too (its webhook-id as sent); the metrics have none, one value per event.
    expect(delivery?.attributes['webhook.id']).toBe(eventId);
    expect((await points('webhook.deliveries')).filter((point) => 'webhook.id' in point.attributes)).toEqual([]);
    const handler = spans.getFinishedSpans().find((span) => span.name.startsWith('webhook handle'));
    if (outcome === 'processed' || outcome === 'handler_failed') {
      expect(handler?.parentSpanContext?.spanId).toBe(delivery?.spanContext().spanId);
      expect(handler?.attributes).toMatchObject({ 'webhook.id': eventId, 'webhook.event.type': delivery?.attributes['webhook.event.type'] });
    } else {
      expect(handler).toBeUndefined();
    }
    // The handler's error, as thrown, on its span.
    const exceptions = outcome === 'handler_failed' ? [expect.objectContaining({ name: 'exception', attributes: expect.objectContaining({ 'exception.type': 'Error', 'exception.message': 'handler down' }) })] : [];
    expect(handler?.events ?? []).toEqual(exceptions);
  });

  it('counts a duplicate and a delivery in progress', async () => {
    const duplicateId = id();
    await post({ id: duplicateId, type: 'call.missed' });
    const [duplicates, inProgress] = [await counted({ 'webhook.entry': entry, 'webhook.outcome': 'duplicate' }), await counted({ 'webhook.entry': entry, 'webhook.outcome': 'in_progress' })];
    expect(await post({ id: duplicateId, type: 'call.missed' })).toBe(200);
    const heldId = id();
    await dedup.begin(keyOf(heldId));
    expect(await post({ id: heldId, type: 'call.missed' })).toBe(409);
    expect(await counted({ 'webhook.entry': entry, 'webhook.outcome': 'duplicate', 'http.response.status_code': 200 })).toBe(duplicates + 1);
    expect(await counted({ 'webhook.entry': entry, 'webhook.outcome': 'in_progress', 'http.response.status_code': 409 })).toBe(inProgress + 1);
  });

  it('counts a failing store as dedup_unavailable, and the failed begin as a store failure', async () => {
    const failures = async () => (await points('webhook.store.failures')).filter((point) => point.attributes['webhook.store.operation'] === 'begin').reduce((sum, point) => sum + (point.value as number), 0);
    const [before, failedBefore] = [await counted({ 'webhook.entry': entry, 'webhook.outcome': 'dedup_unavailable' }), await failures()];
    dedup.failing = true;
    try {
      expect(await post({ id: id(), type: 'call.missed' })).toBe(503);
    } finally {
      dedup.failing = false;
    }
    expect(await counted({ 'webhook.entry': entry, 'webhook.outcome': 'dedup_unavailable', 'http.response.status_code': 503 })).toBe(before + 1);
    expect(await failures()).toBe(failedBefore + 1);
    expect(await descriptionOf('webhook.store.failures')).toBe('Dedup store operations that failed, retries included');
  });

  it('names the secret that matched: a plain one by its place, a keyed one by its id', async () => {
    const [first, keyed] = [await counted({ 'webhook.entry': entry, 'webhook.key.id': '0' }), await counted({ 'webhook.entry': entry, 'webhook.key.id': 'next' })];
    await post({ id: id(), type: 'call.missed' });
    await post({ id: id(), type: 'call.missed', secret: OLD_SECRET });
    expect(await counted({ 'webhook.entry': entry, 'webhook.key.id': '0' })).toBe(first + 1);
    expect(await counted({ 'webhook.entry': entry, 'webhook.key.id': 'next' })).toBe(keyed + 1);
  });

  it('records the duration, and the skew in seconds with its direction', async () => {
    const histogram = async (name: string) =>
      (await points(name)).filter((point) => point.attributes['webhook.entry'] === entry).reduce((sum, point) => sum + (point.value as Histogram).count, 0);
    const [durations, skews] = [await histogram('webhook.delivery.duration'), await histogram('webhook.timestamp.skew')];
    await post({ id: id(), type: 'call.missed', timestamp: NOW_SECONDS + 30 });
    expect(await histogram('webhook.delivery.duration')).toBe(durations + 1);
    expect(await histogram('webhook.timestamp.skew')).toBe(skews + 1);
    const skew = (await points('webhook.timestamp.skew')).find(
      (point) => point.attributes['webhook.entry'] === entry && point.attributes['webhook.timestamp.direction'] === 'ahead',
    );
    expect((skew?.value as Histogram | undefined)?.min).toBe(30);
  });

  it('records no skew for a request whose timestamp does not parse, not even an empty series', async () => {
    const refused = { 'webhook.entry': entry, 'webhook.outcome': 'invalid_timestamp' };
    const before = await counted(refused);
    expect(await post({ id: id() }, { 'webhook-timestamp': 'soon' })).toBe(400);
    expect(await counted(refused)).toBe(before + 1);
    const skews = (await points('webhook.timestamp.skew')).filter((point) => point.attributes['webhook.entry'] === entry && point.attributes['webhook.outcome'] === 'invalid_timestamp');
    expect(skews).toEqual([]);
  });

  it('records nothing once stopped, and stops once however often it is called', async () => {
    instrumentation.stop();
    instrumentation.stop();
    const before = await counted({ 'webhook.entry': entry });
    spans.reset();
    await post({ id: id(), type: 'call.missed' });
    expect(await counted({ 'webhook.entry': entry })).toBe(before);
    expect(spans.getFinishedSpans()).toEqual([]);
  });
});

/** Each entry with a route (or single handler) that fails, and a body limit of 200 bytes. */
const routed: Array<[EntryName, () => Promise<ServedApp>]> = [
  ['express', () => serveExpress({ secret: SECRET, now, dedup: false, maxPayloadBytes: 200 }, failingRoute())],
  ['hono', () => serveHono({ secret: SECRET, now, dedup: false, maxPayloadBytes: 200 }, failingRoute())],
  ['fastify', () => serveFastify({ secret: SECRET, now, dedup: false, maxPayloadBytes: 200 }, failingRoute())],
  ['fetch', () => serveFetch(fetchWebhook({ secret: SECRET, now, dedup: false, maxPayloadBytes: 200 }, () => new Response(null, { status: 503 })))],
  ['lambda', () => serveLambda('http-api', lambdaWebhook({ secret: SECRET, now, dedup: false, maxPayloadBytes: 200 }, () => ({ statusCode: 503, body: '' })))],
];

function failingRoute(): RouteSpy {
  const route = new RouteSpy();
  route.failing = true;
  return route;
}

describe.each(routed)('instrumentWebhooks on the %s entry with a route that fails, over HTTP', (entry, serve) => {
  let app: ServedApp;
  let instrumentation: WebhookInstrumentation;
  beforeAll(async () => {
    app = await serve();
    instrumentation = instrumentWebhooks({ meterProvider, tracerProvider });
  });
  afterAll(async () => {
    instrumentation.stop();
    await app.close();
  });

  const count = async (outcome: string, status: number) =>
    (await points('webhook.deliveries'))
      .filter((point) => point.attributes['webhook.entry'] === entry && point.attributes['webhook.outcome'] === outcome && point.attributes['http.response.status_code'] === status)
      .reduce((sum, point) => sum + (point.value as number), 0);

  it('counts a non-2xx answer of the route or handler as failed, and a body past the limit as payload_too_large', async () => {
    const failedStatus = entry === 'fetch' || entry === 'lambda' ? 503 : 500;
    const [failed, tooLarge] = [await count('failed', failedStatus), await count('payload_too_large', 413)];
    const small = JSON.stringify({ id: 'evt_small', type: 'webhook.test', data: { object: { id: 'o' } } });
    const signed = signedRequest({ id: 'evt_small', body: small });
    const answer = await fetch(`${app.url}/webhooks`, { method: 'POST', body: signed.body, headers: signed.headers });
    await answer.arrayBuffer();
    const large = signedRequest({ id: 'evt_large', body: JSON.stringify({ id: 'evt_large', type: 'webhook.test', data: { object: { id: 'o', pad: 'x'.repeat(400) } } }) });
    const refused = await fetch(`${app.url}/webhooks`, { method: 'POST', body: large.body, headers: large.headers });
    await refused.arrayBuffer();
    expect([answer.status, refused.status]).toEqual([failedStatus, 413]);
    expect(await count('failed', failedStatus)).toBe(failed + 1);
    expect(await count('payload_too_large', 413)).toBe(tooLarge + 1);
  });
});

/** A span's start or end, in nanoseconds, exactly. */
const nanos = ([seconds, nanoseconds]: HrTime): bigint => BigInt(seconds) * 1_000_000_000n + BigInt(nanoseconds);
/**
 * How far apart two spans' clocks may be: the SDK starts each span at
 * `Date.now()`, in whole milliseconds, and times its end from there with the
 * monotonic clock, so two spans started apart also differ by what the wall
 * clock was slewed in between, which a loaded machine's time daemon speeds
 * up. 5 ms: far under the 30 ms (`GAP_MS`) that tells one delivery's span
 * from the other's.
 */
const SPAN_CLOCK_NS = 5_000_000n;
/** How far apart the overlapping deliveries start, and end. */
const GAP_MS = 30;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Handlers of two deliveries of call.missed at once: the first is held until `letFirstGo()`, the second fails once started. */
function heldAndFailing() {
  let started = 0;
  let letFirstGo!: () => void;
  const firstHeld = new Promise<void>((resolve) => (letFirstGo = resolve));
  const handler = async (): Promise<void> => {
    started += 1;
    if (started === 1) return firstHeld;
    throw new Error('the second delivery failed');
  };
  return { handler, started: () => started, letFirstGo };
}

/**
 * Posts two deliveries with `post`: the first is held in its handler until
 * the second has started, failed and been answered; then the first goes on.
 * The first delivery's span thus holds the whole of the second's.
 */
async function overlapping(pair: ReturnType<typeof heldAndFailing>, post: (which: 'first' | 'second') => Promise<number>): Promise<void> {
  const first = post('first');
  await expect.poll(() => pair.started()).toBe(1);
  // Apart by more than a span's clock can blur (see SPAN_CLOCK_NS), at either end.
  await sleep(GAP_MS);
  expect(await post('second')).toBe(500);
  expect(pair.started()).toBe(2);
  await sleep(GAP_MS);
  pair.letFirstGo();
  expect(await first).toBe(204);
}

/**
 * Checks the spans of `entry` after `overlapping`: two deliveries, each with
 * its own outcome, status and duration, and each with its own handler span
 * as its child, within its own time range.
 */
function expectOwnSpans(entry: EntryName): void {
  const finished = spans.getFinishedSpans().filter((span) => span.attributes['webhook.entry'] === entry);
  const receives = finished.filter((span) => span.name === 'webhook receive call.missed');
  const handles = finished.filter((span) => span.name === 'webhook handle call.missed');
  expect([receives.length, handles.length]).toEqual([2, 2]);
  const one = (found: ReadableSpan[], which: (span: ReadableSpan) => boolean): ReadableSpan => {
    const matching = found.filter(which);
    expect(matching).toHaveLength(1);
    return matching[0]!;
  };
  const processed = one(receives, (span) => span.attributes['webhook.outcome'] === 'processed');
  const failed = one(receives, (span) => span.attributes['webhook.outcome'] === 'handler_failed');
  expect(processed.attributes).toMatchObject({ 'http.response.status_code': 204, 'webhook.event.type': 'call.missed' });
  expect(failed.attributes).toMatchObject({ 'http.response.status_code': 500, 'webhook.event.type': 'call.missed' });
  expect([processed.status.code, failed.status.code]).toEqual([SpanStatusCode.UNSET, SpanStatusCode.ERROR]);

  // Each handler span is the child of its own delivery's span.
  const handledOk = one(handles, (span) => span.status.code !== SpanStatusCode.ERROR);
  const handledFailed = one(handles, (span) => span.status.code === SpanStatusCode.ERROR);
  expect(handledOk.parentSpanContext?.spanId).toBe(processed.spanContext().spanId);
  expect(handledFailed.parentSpanContext?.spanId).toBe(failed.spanContext().spanId);
  expect(handledOk.spanContext().traceId).toBe(processed.spanContext().traceId);
  expect(handledFailed.spanContext().traceId).toBe(failed.spanContext().traceId);
  expect(processed.spanContext().spanId).not.toBe(failed.spanContext().spanId);

  // And lies within its time range, not the other's: the second delivery started after the first and was
  // answered before the first's handler ended.
  for (const [handle, receive] of [
    [handledOk, processed],
    [handledFailed, failed],
  ] as const) {
    expect(nanos(handle.startTime) + SPAN_CLOCK_NS >= nanos(receive.startTime)).toBe(true);
    expect(nanos(handle.endTime) <= nanos(receive.endTime) + SPAN_CLOCK_NS).toBe(true);
  }
  expect(nanos(processed.startTime) + SPAN_CLOCK_NS < nanos(failed.startTime)).toBe(true);
  expect(nanos(handledOk.startTime) + SPAN_CLOCK_NS < nanos(failed.startTime)).toBe(true);
  expect(nanos(failed.endTime) + SPAN_CLOCK_NS < nanos(handledOk.endTime)).toBe(true);
  // Its own duration: the first delivery's holds the whole of the second's.
  expect(nanos(processed.duration) > nanos(failed.duration) + BigInt(GAP_MS) * 1_000_000n).toBe(true);
}

/** The sum and count of `webhook.delivery.duration` for `entry` and `outcome`, so far. */
async function durationsOf(entry: EntryName, outcome: string): Promise<{ count: number; sum: number }> {
  const matching = (await points('webhook.delivery.duration')).filter(
    (point) => point.attributes['webhook.entry'] === entry && point.attributes['webhook.outcome'] === outcome,
  );
  return matching.reduce((total, point) => ({ count: total.count + (point.value as Histogram).count, sum: total.sum + (point.value as Histogram).sum! }), { count: 0, sum: 0 });
}

/** The total of a counter without attributes of its own, so far. */
async function total(name: string): Promise<number> {
  return (await points(name)).reduce((sum, point) => sum + (point.value as number), 0);
}

const quietHandlers = { onHandlerError: () => undefined };
type ServeOn = (on: EventHandlers) => Promise<ServedApp>;
const sameIdEntries: Array<[EntryName, ServeOn]> = [
  ['express', (on) => serveExpressHandlers({ secret: SECRET, now, dedup: false, on, ...quietHandlers })],
  ['hono', (on) => serveHonoHandlers({ secret: SECRET, now, dedup: false, on, ...quietHandlers })],
  ['fastify', (on) => serveFastifyHandlers({ secret: SECRET, now, dedup: false, on, ...quietHandlers })],
  ['fetch', (on) => serveFetch(fetchWebhook({ secret: SECRET, now, dedup: false, on, ...quietHandlers }))],
  ['lambda', (on) => serveLambda('http-api', lambdaWebhook({ secret: SECRET, now, dedup: false, on, ...quietHandlers }))],
  ['azure', (on) => serveAzure(azureWebhook({ secret: SECRET, now, dedup: false, on, ...quietHandlers }))],
  ['h3', (on) => serveH3(h3Webhook({ secret: SECRET, now, dedup: false, on, ...quietHandlers }))],
];

describe.each(sameIdEntries)('instrumentWebhooks on the %s entry, for deliveries that overlap, over HTTP', (entry, serve) => {
  let instrumentation: WebhookInstrumentation;
  beforeEach(() => {
    instrumentation = instrumentWebhooks({ meterProvider, tracerProvider });
    spans.reset();
  });
  afterEach(() => instrumentation.stop());

  it('gives two concurrent deliveries of one event id each its own span, outcome, duration and handler span', async () => {
    const pair = heldAndFailing();
    const app = await serve({ 'call.missed': pair.handler });
    const [processedBefore, failedBefore] = [await durationsOf(entry, 'processed'), await durationsOf(entry, 'handler_failed')];
    try {
      // The same event id, signed alike: only dedup: false lets the second run while the first does.
      await overlapping(pair, async () => {
        const { body, headers } = signedRequest({ id: 'evt_twice', type: 'call.missed' });
        const response = await fetch(`${app.url}/webhooks`, { method: 'POST', body, headers });
        await response.arrayBuffer();
        return response.status;
      });
    } finally {
      await app.close();
    }
    expectOwnSpans(entry);
    const [processed, failed] = [await durationsOf(entry, 'processed'), await durationsOf(entry, 'handler_failed')];
    expect([processed.count - processedBefore.count, failed.count - failedBefore.count]).toEqual([1, 1]);
    expect(processed.sum - processedBefore.sum).toBeGreaterThan(failed.sum - failedBefore.sum);
  });
});

/**
 * Each entry run under `inSpan`, as an HTTP server's instrumentation runs
 * the app under its server span (Express and Fastify by their Node server's
 * request listener, the others in-process), its user code being `work`: a
 * handler of `on`, the Fetch and Lambda entries' single handler, or a route
 * after the middleware. Answers the status.
 */
type RunUnder = (inSpan: <T>(run: () => T) => T, work: () => void) => Promise<number>;
const parentedEntries: Array<[string, EntryName, RunUnder]> = [
  [
    'express with on',
    'express',
    async (inSpan, work) => {
      const app = express().post('/webhooks', expressWebhook({ secret: SECRET, now, dedup: false, on: { 'call.missed': work } }));
      return await postUnder(app, inSpan);
    },
  ],
  [
    'express with a route',
    'express',
    async (inSpan, work) => {
      const app = express().post('/webhooks', expressWebhook({ secret: SECRET, now, dedup: false }), (_req, res) => {
        work();
        res.sendStatus(204);
      });
      return await postUnder(app, inSpan);
    },
  ],
  [
    'hono with on',
    'hono',
    async (inSpan, work) => {
      const app = new Hono().post('/webhooks', honoWebhook({ secret: SECRET, now, dedup: false, on: { 'call.missed': work } }));
      const { body, headers } = signedRequest({ id: 'evt_parented' });
      return (await inSpan(() => app.request('/webhooks', { method: 'POST', body, headers }))).status;
    },
  ],
  [
    'hono with a route',
    'hono',
    async (inSpan, work) => {
      const app = new Hono().post('/webhooks', honoWebhook({ secret: SECRET, now, dedup: false }), (c) => {
        work();
        return c.body(null, 204);
      });
      const { body, headers } = signedRequest({ id: 'evt_parented' });
      return (await inSpan(() => app.request('/webhooks', { method: 'POST', body, headers }))).status;
    },
  ],
  [
    'fastify with on',
    'fastify',
    (inSpan, work) => postToFastify(inSpan, fastifyWebhook({ secret: SECRET, now, dedup: false, path: '/webhooks', on: { 'call.missed': work } })),
  ],
  [
    'fastify with routes',
    'fastify',
    (inSpan, work) =>
      postToFastify(
        inSpan,
        fastifyWebhook({
          secret: SECRET,
          now,
          dedup: false,
          routes(webhooks) {
            // A hook of the user's own that waits: the route after it still runs in the handler's span.
            webhooks.addHook('preValidation', async () => await new Promise<void>((resolve) => setImmediate(resolve)));
            webhooks.post('/webhooks', async (_request, reply) => {
              work();
              return reply.code(204).send();
            });
          },
        }),
      ),
  ],
  [
    'fetch with on',
    'fetch',
    async (inSpan, work) => {
      const webhook = fetchWebhook({ secret: SECRET, now, dedup: false, on: { 'call.missed': work } });
      const { body, headers } = signedRequest({ id: 'evt_parented' });
      return (await inSpan(() => webhook(new Request('http://receiver.test/webhooks', { method: 'POST', body, headers })))).status;
    },
  ],
  [
    'fetch with a single handler',
    'fetch',
    async (inSpan, work) => {
      const webhook = fetchWebhook({ secret: SECRET, now, dedup: false }, async () => {
        await Promise.resolve();
        work();
      });
      const { body, headers } = signedRequest({ id: 'evt_parented' });
      return (await inSpan(() => webhook(new Request('http://receiver.test/webhooks', { method: 'POST', body, headers })))).status;
    },
  ],
  [
    'lambda with on',
    'lambda',
    async (inSpan, work) => {
      const webhook = lambdaWebhook({ secret: SECRET, now, dedup: false, on: { 'call.missed': work } });
      return (await inSpan(() => webhook(lambdaEvent('http-api', signedRequest({ id: 'evt_parented' })), lambdaContext))).statusCode;
    },
  ],
  [
    'azure with on',
    'azure',
    async (inSpan, work) => {
      const webhook = azureWebhook({ secret: SECRET, now, dedup: false, on: { 'call.missed': work } });
      return (await inSpan(() => webhook(azureRequest(signedRequest({ id: 'evt_parented' })), new InvocationContext()))).status!;
    },
  ],
  [
    'azure with a single handler',
    'azure',
    async (inSpan, work) => {
      const webhook = azureWebhook({ secret: SECRET, now, dedup: false }, () => work());
      return (await inSpan(() => webhook(azureRequest(signedRequest({ id: 'evt_parented' })), new InvocationContext()))).status!;
    },
  ],
  [
    'h3 with on',
    'h3',
    (inSpan, work) => postUnder(toNodeHandler(new H3().post('/webhooks', h3Webhook({ secret: SECRET, now, dedup: false, on: { 'call.missed': work } }))), inSpan),
  ],
  [
    'h3 with a single handler',
    'h3',
    (inSpan, work) => postUnder(toNodeHandler(new H3().post('/webhooks', h3Webhook({ secret: SECRET, now, dedup: false }, () => work()))), inSpan),
  ],
  [
    'lambda with a single handler',
    'lambda',
    async (inSpan, work) => {
      const webhook = lambdaWebhook({ secret: SECRET, now, dedup: false }, () => work());
      return (await inSpan(() => webhook(lambdaEvent('http-api', signedRequest({ id: 'evt_parented' })), lambdaContext))).statusCode;
    },
  ],
];

/** The request the Azure Functions host hands over for `signed`. */
function azureRequest({ body, headers }: { body: string; headers: Record<string, string> }): HttpRequest {
  return new HttpRequest({ method: 'POST', url: 'http://receiver.test/api/webhooks', headers, body: { string: body } });
}

/** Serves a Node request listener under `inSpan` and posts one delivery to it; answers the status. */
async function postUnder(app: (req: IncomingMessage, res: ServerResponse) => void, inSpan: <T>(run: () => T) => T): Promise<number> {
  const served = await serveNode(createServer((req, res) => inSpan(() => app(req, res))));
  try {
    return (await fetch(`${served.url}/webhooks`, { method: 'POST', ...signedRequest({ id: 'evt_parented' }) })).status;
  } finally {
    await served.close();
  }
}

/** Registers `plugin` on Fastify, its server's requests under `inSpan`, and posts one delivery; answers the status. */
async function postToFastify(inSpan: <T>(run: () => T) => T, plugin: FastifyPluginAsync): Promise<number> {
  const app = Fastify({ serverFactory: (handler) => createServer((req, res) => inSpan(() => handler(req, res))) });
  await app.register(plugin);
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  try {
    return (await fetch(`${url}/webhooks`, { method: 'POST', ...signedRequest({ id: 'evt_parented' }) })).status;
  } finally {
    await app.close();
  }
}

/**
 * Each test of the calling suite under the SDK's AsyncLocalStorageContextManager, with an instrumentation of
 * its own, stopped after it; a test that restarts it puts the new one in `current`.
 */
function instrumentedInContext(): { current: WebhookInstrumentation } {
  const instrumented = {} as { current: WebhookInstrumentation };
  beforeEach(() => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    instrumented.current = instrumentWebhooks({ meterProvider, tracerProvider });
    spans.reset();
  });
  afterEach(() => {
    instrumented.current.stop();
    context.disable();
  });
  return instrumented;
}

describe.each(parentedEntries)('instrumentWebhooks on %s, run in a span (the SDK\'s AsyncLocalStorageContextManager)', (_name, entry, runUnder) => {
  const instrumented = instrumentedInContext();

  it('opens the delivery span under the span active where the entry runs, the handler span under it, and runs the user code with the handler span active', async () => {
    const server = tracerProvider.getTracer('test').startSpan('POST /webhooks');
    // The user's code starts a span of its own, as a database client's instrumentation would.
    const work = (): void => tracerProvider.getTracer('test').startSpan('SELECT webhooks').end();
    const status = await runUnder((run) => context.with(trace.setSpan(context.active(), server), run), work);
    server.end();
    expect(status).toBe(204);
    const finished = spans.getFinishedSpans();
    const receive = finished.find((span) => span.name === 'webhook receive call.missed');
    const handle = finished.find((span) => span.name === 'webhook handle call.missed');
    const query = finished.find((span) => span.name === 'SELECT webhooks');
    expect(receive?.attributes['webhook.entry']).toBe(entry);
    expect(receive?.parentSpanContext?.spanId).toBe(server.spanContext().spanId);
    expect(handle?.parentSpanContext?.spanId).toBe(receive?.spanContext().spanId);
    expect(query?.parentSpanContext?.spanId).toBe(handle?.spanContext().spanId);
    for (const span of [receive, handle, query]) expect(span?.spanContext().traceId).toBe(server.spanContext().traceId);
  });

  it("runs the user code without the baggage a sender's header put in the request's context, under the sender's trace", async () => {
    // The Node SDK's default propagator, with which an HTTP instrumentation extracts the request's headers.
    propagation.setGlobalPropagator(new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] }));
    try {
      const sender = { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', baggage: 'user.id=admin' };
      const extracted = propagation.extract(ROOT_CONTEXT, sender);
      expect(propagation.getBaggage(extracted)?.getEntry('user.id')?.value).toBe('admin');
      const server = tracerProvider.getTracer('test').startSpan('POST /webhooks', {}, extracted);
      const baggage: Array<Baggage | undefined> = [];
      expect(await runUnder((run) => context.with(trace.setSpan(extracted, server), run), () => void baggage.push(propagation.getBaggage(context.active())))).toBe(204);
      server.end();
      expect(baggage).toEqual([undefined]);
      const receive = spans.getFinishedSpans().find((span) => span.name === 'webhook receive call.missed');
      expect(receive?.spanContext().traceId).toBe('0af7651916cd43dd8448eb211c80319c');
    } finally {
      propagation.disable();
    }
  });

  it('runs the user code in the context where the entry runs once stopped', async () => {
    instrumented.current.stop();
    const server = tracerProvider.getTracer('test').startSpan('POST /webhooks');
    const work = (): void => tracerProvider.getTracer('test').startSpan('SELECT webhooks').end();
    expect(await runUnder((run) => context.with(trace.setSpan(context.active(), server), run), work)).toBe(204);
    server.end();
    const finished = spans.getFinishedSpans();
    expect(finished.map((span) => span.name).sort()).toEqual(['POST /webhooks', 'SELECT webhooks']);
    expect(finished.find((span) => span.name === 'SELECT webhooks')?.parentSpanContext?.spanId).toBe(server.spanContext().spanId);
  });
});

/** A point where the code of a delivery waits until the test opens it. */
interface Gate {
  pass(): Promise<void>;
  reached(): number;
  open(): void;
}

function gate(): Gate {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  let reached = 0;
  return {
    pass: () => {
      reached += 1;
      return opened;
    },
    reached: () => reached,
    open,
  };
}

/** What the route below rejects with: not an Error, which Hono would answer itself; anything else it passes on. */
const UPSTREAM_DOWN = { upstream: 'down' };

/** A Hono app whose route, behind the middleware, waits at `held` when given, then rejects with UPSTREAM_DOWN. */
function rejectingRoute(held?: Gate): Hono {
  return new Hono().post('/webhooks', honoWebhook({ secret: SECRET, now, dedup: false }), async () => {
    await held?.pass();
    return Promise.reject(UPSTREAM_DOWN);
  });
}

describe("instrumentWebhooks on Hono in process, run in a span (the SDK's AsyncLocalStorageContextManager)", () => {
  const instrumented = instrumentedInContext();

  /**
   * Posts one delivery to `app` under a server span; once the delivery waits at `held`, stops the
   * instrumentation and starts another, then lets the delivery go on. Answers the server span, how the
   * request settled, and the uncaught exceptions meanwhile: a channel subscriber's throw surfaces as one.
   */
  async function postRestarting(app: Hono, held: Gate) {
    const server = tracerProvider.getTracer('test').startSpan('POST /webhooks');
    const { result: settled, uncaught } = await uncaughtDuring(async () => {
      const { body, headers } = signedRequest({ id: 'evt_restarted' });
      const answering = context.with(trace.setSpan(context.active(), server), () => app.request('/webhooks', { method: 'POST', body, headers }));
      await expect.poll(() => held.reached()).toBe(1);
      instrumented.current.stop();
      instrumented.current = instrumentWebhooks({ meterProvider, tracerProvider });
      held.open();
      const [answered] = await Promise.allSettled([answering]);
      server.end();
      return answered;
    });
    return { server, settled, uncaught };
  }

  it('marks the delivery span and the handler span failed when the route rejects', async () => {
    const { body, headers } = signedRequest({ id: 'evt_route_rejects' });
    await expect(rejectingRoute().request('/webhooks', { method: 'POST', body, headers })).rejects.toBe(UPSTREAM_DOWN);
    const finished = spans.getFinishedSpans().map((span) => [span.name, span.status.code]);
    expect(finished).toEqual([
      ['webhook handle call.missed', SpanStatusCode.ERROR],
      ['webhook receive call.missed', SpanStatusCode.ERROR],
    ]);
  });

  it('restarted mid-delivery, opens its handler span under the span where the entry runs, no delivery span, and throws nothing', async () => {
    const lookup = gate();
    const work = (): void => tracerProvider.getTracer('test').startSpan('SELECT webhooks').end();
    const secret = async (): Promise<string> => {
      await lookup.pass();
      return SECRET;
    };
    const app = new Hono().post('/webhooks', honoWebhook({ tenants: { of: () => 'acme', secret }, now, dedup: false, on: { 'call.missed': work } }));
    const { server, settled, uncaught } = await postRestarting(app, lookup);
    expect(settled).toMatchObject({ status: 'fulfilled', value: { status: 204 } });
    expect(uncaught).toEqual([]);
    const finished = spans.getFinishedSpans();
    // The delivery started before this instrumentation did: its span is the stopped one's, never ended.
    expect(finished.map((span) => span.name).sort()).toEqual(['POST /webhooks', 'SELECT webhooks', 'webhook handle call.missed']);
    const handle = finished.find((span) => span.name === 'webhook handle call.missed');
    expect(handle?.parentSpanContext?.spanId).toBe(server.spanContext().spanId);
    expect(handle?.spanContext().traceId).toBe(server.spanContext().traceId);
    expect(finished.find((span) => span.name === 'SELECT webhooks')?.parentSpanContext?.spanId).toBe(handle?.spanContext().spanId);
  });

  it('restarted while a route runs, throws nothing when the route rejects, and ends none of the spans the stopped one opened', async () => {
    const route = gate();
    const { settled, uncaught } = await postRestarting(rejectingRoute(route), route);
    expect(settled).toEqual({ status: 'rejected', reason: UPSTREAM_DOWN });
    expect(uncaught).toEqual([]);
    expect(spans.getFinishedSpans().map((span) => span.name)).toEqual(['POST /webhooks']);
  });
});

/** Serves every tenant at /webhooks/<tenant> on `entry`, with `on` and the resolver `secret`. */
const tenantEntries = Object.entries(TENANT_SERVERS) as Array<[EntryName, (typeof TENANT_SERVERS)[EntryName]]>;
const tenantSecret = (tenant: string): string => `whsec_${Buffer.from(`${tenant}-otel-secret-0123456789`).toString('base64')}`;

describe.each(tenantEntries)('instrumentWebhooks on the %s entry, for many tenants, over HTTP', (entry, serve) => {
  let instrumentation: WebhookInstrumentation;
  beforeEach(() => {
    instrumentation = instrumentWebhooks({ meterProvider, tracerProvider });
    spans.reset();
  });
  afterEach(() => instrumentation.stop());

  /** POSTs a delivery of `id` to `tenant`, signed with that tenant's secret unless told; answers the status. */
  async function deliver(app: ServedApp, tenant: string, spec: RequestSpec = {}): Promise<number> {
    const { body, headers } = signedRequest({ type: 'call.missed', secret: tenantSecret(tenant), ...spec });
    const response = await fetch(`${app.url}/webhooks/${tenant}`, { method: 'POST', body, headers });
    await response.arrayBuffer();
    return response.status;
  }

  it('gives the deliveries of one event id to two tenants, at once, each its own span and handler span', async () => {
    const pair = heldAndFailing();
    const tenants: string[] = [];
    const app = await serve({
      tenants: { secret: (tenant) => tenantSecret(tenant) },
      now,
      on: {
        'call.missed': (_event, delivery) => {
          tenants.push(`${delivery.tenant}/${delivery.id}`);
          return pair.handler();
        },
      },
      onHandlerError: () => undefined,
    });
    try {
      await overlapping(pair, (which) => deliver(app, which === 'first' ? 'acme' : 'globex', { id: 'evt_shared' }));
    } finally {
      await app.close();
    }
    expect(tenants).toEqual(['acme/evt_shared', 'globex/evt_shared']);
    expectOwnSpans(entry);
  });

  it('counts each failed secret lookup on webhook.secret_lookup.failures, not as a store failure', async () => {
    const secret: SecretResolver = (tenant) => (tenant === 'down' ? Promise.reject(new Error('the vault is down')) : new Promise<never>(() => {}));
    const app = await serve({ tenants: { secret, lookupTimeoutMs: 50, onLookupError: () => undefined }, now, on: { 'call.missed': () => undefined } });
    const [lookups, stores, unavailable] = [
      await total('webhook.secret_lookup.failures'),
      await total('webhook.store.failures'),
      await counted({ 'webhook.entry': entry, 'webhook.outcome': 'secret_unavailable', 'http.response.status_code': 503 }),
    ];
    try {
      expect(await deliver(app, 'down', { id: 'evt_rejected' })).toBe(503);
      expect(await deliver(app, 'hung', { id: 'evt_timed_out' })).toBe(503);
    } finally {
      await app.close();
    }
    expect(await total('webhook.secret_lookup.failures')).toBe(lookups + 2);
    expect(await descriptionOf('webhook.secret_lookup.failures')).toBe("Lookups of a tenant's secret that failed or timed out");
    expect(await total('webhook.store.failures')).toBe(stores);
    expect(await counted({ 'webhook.entry': entry, 'webhook.outcome': 'secret_unavailable', 'http.response.status_code': 503 })).toBe(unavailable + 2);
    const refusals = spans.getFinishedSpans().filter((span) => span.name === 'webhook receive');
    expect(refusals.map((span) => [span.attributes['webhook.outcome'], span.status.code])).toEqual([
      ['secret_unavailable', SpanStatusCode.ERROR],
      ['secret_unavailable', SpanStatusCode.ERROR],
    ]);
  });

  it('records no lookup failure once stopped', async () => {
    instrumentation.stop();
    const app = await serve({ tenants: { secret: () => Promise.reject(new Error('the vault is down')), onLookupError: () => undefined }, now, on: {} });
    const before = await total('webhook.secret_lookup.failures');
    try {
      expect(await deliver(app, 'down')).toBe(503);
    } finally {
      await app.close();
    }
    expect(await total('webhook.secret_lookup.failures')).toBe(before);
  });
});

/** The counter's value for these attributes, so far, over every entry. */
async function counted(attributes: Record<string, unknown>): Promise<number> {
  const matching = (await points('webhook.deliveries')).filter((point) => Object.entries(attributes).every(([key, value]) => point.attributes[key] === value));
  return matching.reduce((sum, point) => sum + (point.value as number), 0);
}

type ServeHandoff = (handoff: Handoff) => Promise<ServedApp>;
const handoffEntries: Array<[EntryName, ServeHandoff]> = [
  ['express', (handoff) => serveExpressHandlers({ secret: SECRET, now, handoff })],
  ['hono', (handoff) => serveHonoHandlers({ secret: SECRET, now, handoff })],
  ['fastify', (handoff) => serveFastifyHandlers({ secret: SECRET, now, handoff })],
  ['fetch', (handoff) => serveFetch(fetchWebhook({ secret: SECRET, now, handoff }))],
  ['lambda', (handoff) => serveLambda('http-api', lambdaWebhook({ secret: SECRET, now, handoff }))],
];

describe.each(handoffEntries)('instrumentWebhooks on the %s entry with a handoff, over HTTP', (entry, serve) => {
  let instrumentation: WebhookInstrumentation;
  beforeEach(() => {
    instrumentation = instrumentWebhooks({ meterProvider, tracerProvider });
    spans.reset();
  });
  afterEach(() => instrumentation.stop());

  it('counts a delivery the queue recorded as queued, with its 202, and spans the handoff under it', async () => {
    const app = await serve({ hand: async () => undefined });
    const before = await counted({ 'webhook.entry': entry, 'webhook.outcome': 'queued', 'http.response.status_code': 202 });
    try {
      const response = await fetch(`${app.url}/webhooks`, { method: 'POST', ...signedRequest({ id: `evt_queued_${entry}` }) });
      await response.arrayBuffer();
      expect(response.status).toBe(202);
    } finally {
      await app.close();
    }
    expect(await counted({ 'webhook.entry': entry, 'webhook.outcome': 'queued', 'http.response.status_code': 202 })).toBe(before + 1);
    const receive = spans.getFinishedSpans().find((span) => span.name === 'webhook receive call.missed');
    const handle = spans.getFinishedSpans().find((span) => span.name === 'webhook handle call.missed');
    expect(receive?.attributes).toMatchObject({ 'webhook.outcome': 'queued', 'http.response.status_code': 202, 'webhook.entry': entry });
    expect(handle?.parentSpanContext?.spanId).toBe(receive?.spanContext().spanId);
  });
});

const nodeEntries: Array<[EntryName, () => Promise<ServedApp>]> = [
  ['express', () => serveExpressHandlers({ secret: SECRET, now, dedup: false, on })],
  ['fastify', () => serveFastifyHandlers({ secret: SECRET, now, dedup: false, on })],
];

describe.each(nodeEntries)('instrumentWebhooks on the %s entry, for a sender that hangs up mid-body', (entry, serve) => {
  let instrumentation: WebhookInstrumentation;
  beforeEach(() => {
    instrumentation = instrumentWebhooks({ meterProvider, tracerProvider });
    spans.reset();
  });
  afterEach(() => instrumentation.stop());

  it('ends the delivery span, answered nothing, and counts no delivery', async () => {
    const app = await serve();
    const timed = async (): Promise<number> =>
      (await points('webhook.delivery.duration')).filter((point) => point.attributes['webhook.entry'] === entry).reduce((sum, point) => sum + (point.value as Histogram).count, 0);
    const before = [await counted({ 'webhook.entry': entry }), await timed()];
    try {
      const { body, headers } = signedRequest({ id: `evt_gone_${entry}` });
      const connection = await RawConnection.open(app.url);
      connection.post('/webhooks', Object.entries(headers), body.slice(0, 40), 500);
      // Let the server start reading the body before the hang-up.
      await sleep(50);
      connection.hangUp();
      await expect.poll(() => spans.getFinishedSpans().filter((span) => span.name.startsWith('webhook receive')).length).toBe(1);
    } finally {
      await app.close();
    }
    const [receive] = spans.getFinishedSpans();
    expect(receive?.name).toBe('webhook receive');
    expect(receive?.attributes).toEqual({ 'webhook.entry': entry });
    expect(receive?.status.code).toBe(SpanStatusCode.UNSET);
    expect(spans.getFinishedSpans()).toHaveLength(1);
    expect([await counted({ 'webhook.entry': entry }), await timed()]).toEqual(before);
  });
});

describe('instrumentWebhooks instruments', () => {
  it("describes each delivery's instruments with their units, and records durations and skews in seconds", async () => {
    const instrumentation = instrumentWebhooks({ meterProvider, tracerProvider });
    const app = await serveFetch(fetchWebhook({ secret: SECRET, now, dedup: false, on: { 'call.missed': () => undefined } }));
    try {
      const before = await durationsOf('fetch', 'processed');
      // Signed 30 s before the receiver's clock: a skew of 30 s.
      const { body, headers } = signedRequest({ id: 'evt_units', type: 'call.missed', timestamp: NOW_SECONDS - 30 });
      expect((await fetch(`${app.url}/webhooks`, { method: 'POST', body, headers })).status).toBe(204);
      const after = await durationsOf('fetch', 'processed');
      expect(after.count - before.count).toBe(1);
      // A request on this machine takes milliseconds: well under the 10 s a sender waits, as seconds.
      expect(after.sum - before.sum).toBeGreaterThan(0);
      expect(after.sum - before.sum).toBeLessThan(10);
      const skew = (await points('webhook.timestamp.skew')).find((point) => point.attributes['webhook.entry'] === 'fetch' && point.attributes['webhook.outcome'] === 'processed');
      expect((skew?.value as Histogram).max).toBe(30);
      expect(skew?.attributes['webhook.timestamp.direction']).toBe('behind');
      // Buckets for a sender's 10 s window, and for skews up to and past the 300 s tolerance.
      expect((skew?.value as Histogram).buckets.boundaries).toEqual([0, 1, 10, 60, 120, 240, 300, 600]);
      const duration = (await points('webhook.delivery.duration')).find((point) => point.attributes['webhook.entry'] === 'fetch');
      expect((duration?.value as Histogram).buckets.boundaries).toEqual([0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 7.5, 10, 15, 30]);
    } finally {
      instrumentation.stop();
      await app.close();
    }
    const { resourceMetrics } = await reader.collect();
    const descriptors = Object.fromEntries(
      resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics).map(({ descriptor }) => [descriptor.name, { description: descriptor.description, unit: descriptor.unit }]),
    );
    expect(descriptors).toMatchObject({
      'webhook.deliveries': { description: 'Webhook deliveries answered, by outcome', unit: '' },
      'webhook.delivery.duration': { description: 'From the start of handling a delivery to its answer', unit: 's' },
      'webhook.timestamp.skew': { description: 'The local clock minus webhook-timestamp', unit: 's' },
    });
  });
});

describe('instrumentWebhooks options', () => {
  it('refuses options that are no object as an option mistake, and takes none for the global providers', () => {
    for (const given of [null, 7, 'meterProvider']) expectOptionMistake(() => instrumentWebhooks(given as never), 'instrumentWebhooks options must be an object');
    instrumentWebhooks().stop();
  });
});
