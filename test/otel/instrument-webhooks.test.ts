/**
 * instrumentWebhooks over real HTTP on all five entries, recorded by the
 * OpenTelemetry SDK's in-memory readers: the counter, the histograms and the
 * spans of every outcome a receiver with handlers gives, which secret
 * matched, and nothing once stopped.
 */
import { AggregationTemporality, MeterProvider, MetricReader, type DataPoint, type Histogram } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { verifyWebhook as fetchWebhook } from '../../adapters/fetch.js';
import { verifyWebhook as lambdaWebhook } from '../../adapters/lambda.js';
import { instrumentWebhooks, type WebhookInstrumentation } from '../../adapters/otel.js';
import type { EntryName } from '../../src/index.js';
import { RouteSpy } from '../helpers/adapter-contract.js';
import {
  serveExpress,
  serveExpressHandlers,
  serveFastify,
  serveFastifyHandlers,
  serveFetch,
  serveHono,
  serveHonoHandlers,
  serveLambda,
  type ServedApp,
} from '../helpers/adapter-servers.js';
import { NOW_SECONDS, now, OLD_SECRET, SECRET, signedRequest, type RequestSpec } from '../helpers/signed-request.js';
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
const quiet = { onHandlerError: () => undefined, onStoreError: () => undefined };

type Serve = (dedup: TestDedupStore) => Promise<ServedApp>;
const entries: Array<[EntryName, Serve]> = [
  ['express', (dedup) => serveExpressHandlers({ secret: [SECRET, { id: 'next', secret: OLD_SECRET }], now, dedup, on, ...quiet })],
  ['hono', (dedup) => serveHonoHandlers({ secret: [SECRET, { id: 'next', secret: OLD_SECRET }], now, dedup, on, ...quiet })],
  ['fastify', (dedup) => serveFastifyHandlers({ secret: [SECRET, { id: 'next', secret: OLD_SECRET }], now, dedup, on, ...quiet })],
  ['fetch', (dedup) => serveFetch(fetchWebhook({ secret: [SECRET, { id: 'next', secret: OLD_SECRET }], now, dedup, on, ...quiet }))],
  ['lambda', (dedup) => serveLambda('http-api', lambdaWebhook({ secret: [SECRET, { id: 'next', secret: OLD_SECRET }], now, dedup, on, ...quiet }))],
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
    const handler = spans.getFinishedSpans().find((span) => span.name.startsWith('webhook handle'));
    if (outcome === 'processed' || outcome === 'handler_failed') {
      expect(handler?.parentSpanContext?.spanId).toBe(delivery?.spanContext().spanId);
    } else {
      expect(handler).toBeUndefined();
    }
  });

  it('counts a duplicate and a delivery in progress', async () => {
    const duplicateId = id();
    await post({ id: duplicateId, type: 'call.missed' });
    const [duplicates, inProgress] = [await counted({ 'webhook.entry': entry, 'webhook.outcome': 'duplicate' }), await counted({ 'webhook.entry': entry, 'webhook.outcome': 'in_progress' })];
    expect(await post({ id: duplicateId, type: 'call.missed' })).toBe(200);
    const heldId = id();
    await dedup.begin(heldId);
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
