/**
 * What `svc-webhooks/otel` costs a request (`npm run bench:otel`): the Fetch
 * entry with a handler of `on`, as built, three ways: with nobody
 * subscribed; with the same spans, context and metrics written by hand around
 * it (the minimum for that work: a span around the entry, one made active
 * around the handler, three records at the answer); and with
 * `instrumentWebhooks()` subscribed. Each side runs in a process of its own,
 * subscribed once before its first request as an application is. Each round
 * runs one process of each side, the order rotating, and the differences are
 * taken within the round. The SDK's tracer and meter providers record, with
 * the `AsyncLocalStorageContextManager` a Node SDK registers and each request
 * run under `context.with` as an HTTP server's instrumentation runs it; spans
 * go to a processor that drops them, so the cost is the instrumentation's and
 * the SDK's, not an exporter's. Prints CPU µs per request of each side and
 * the differences, median and quartiles over rounds.
 */
import { Buffer } from 'node:buffer';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { context, createContextKey, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, TraceFlags, type Attributes, type Meter, type Tracer } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { WebhookDelivery, WebhookEvent } from '../src/index.js';
import { built } from './built.js';
import { quartilesOf } from './cpu-rounds.js';
import { kibEnvelope, numberedId } from './payloads.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 20);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 4000);
const side = process.argv[2];

const SIDES = ['off', 'by hand', 'on'] as const;
type Side = (typeof SIDES)[number];

if ((SIDES as readonly string[]).includes(side ?? '')) {
  process.stdout.write(String(await timeSide(side as Side)));
} else {
  const spent = new Map<Side, number[]>(SIDES.map((name) => [name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    // Each round, another side first.
    for (let i = 0; i < SIDES.length; i++) {
      const name = SIDES[(i + round) % SIDES.length]!;
      spent.get(name)!.push(inProcess(name));
    }
  }
  const [off, byHand, on] = SIDES.map((name) => spent.get(name)!);
  const band = (values: readonly number[]): string => {
    const [low, mid, high] = quartilesOf(values);
    return `${mid.toFixed(2)} (${low.toFixed(2)}–${high.toFixed(2)})`;
  };
  const minus = (a: readonly number[], b: readonly number[]): number[] => a.map((value, round) => value - b[round]!);
  console.log(`Node ${process.version}, Fetch entry with on, ${ROUNDS} rounds of a process per side, ${REQUESTS} requests each after as many to warm up; CPU µs per request (median, quartiles)`);
  console.log(`nobody subscribed: ${band(off!)}`);
  console.log(`spans and metrics by hand: ${band(byHand!)}`);
  console.log(`instrumentWebhooks: ${band(on!)}`);
  console.log(`by hand, minus nobody subscribed, per round: +${band(minus(byHand!, off!))} µs`);
  console.log(`instrumentWebhooks, minus nobody subscribed: +${band(minus(on!, off!))} µs`);
  console.log(`instrumentWebhooks, minus by hand: ${band(minus(on!, byHand!))} µs`);
}

/** Runs one side in a process of its own; answers its CPU µs per request. */
function inProcess(name: string): number {
  const run = spawnSync(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  if (run.status !== 0) throw new Error(`the ${name} side exited with ${run.status ?? run.signal}`);
  return Number(run.stdout);
}

/** Sets one side up, warms it with one block, and answers the CPU µs per request of the next. */
async function timeSide(name: Side): Promise<number> {
  const { verifyWebhook } = await built<typeof import('../adapters/fetch.js')>('adapters/fetch.js');
  const { instrumentWebhooks } = await built<typeof import('../adapters/otel.js')>('adapters/otel.js');
  const { sign } = await built<typeof import('../src/index.js')>('src/index.js');
  const secret = `whsec_${Buffer.from('bench-secret-bench-secret-bench!').toString('base64')}`;
  const signedAt = 1_700_000_000;
  const pool = Array.from({ length: 2 * REQUESTS }, (_, i) => {
    const id = numberedId(i);
    const body = kibEnvelope(id);
    return { body, headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), ...sign(body, { id, timestamp: signedAt, secret }) } };
  });
  let handled = 0;
  const handle = (_event: WebhookEvent): void => void handled++;
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  const dropped: SpanProcessor = { onStart: () => undefined, onEnd: () => undefined, forceFlush: async () => undefined, shutdown: async () => undefined };
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [dropped] });
  const meterProvider = new MeterProvider();
  const options = { secret, now: () => signedAt * 1000, dedup: false } as const;
  let entry: (request: Request) => Promise<Response>;
  if (name === 'by hand') entry = byHand(verifyWebhook, tracerProvider.getTracer('bench'), meterProvider.getMeter('bench'), options, handle);
  else {
    if (name === 'on') instrumentWebhooks({ tracerProvider, meterProvider });
    entry = verifyWebhook({ ...options, on: { 'message.received': handle } });
  }
  // The sampled server span an HTTP instrumentation would have made active for each request.
  const server = trace.setSpan(ROOT_CONTEXT, trace.wrapSpanContext({ traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: TraceFlags.SAMPLED }));
  let at = 0;
  const block = async (): Promise<number> => {
    const before = process.cpuUsage();
    for (let i = 0; i < REQUESTS; i++) {
      const { body, headers } = pool[at++ % pool.length]!;
      const { status } = await context.with(server, () => entry(new Request('http://receiver.test/webhooks', { method: 'POST', body, headers })));
      if (status !== 204) throw new Error(`answered ${status}, not 204`);
    }
    const used = process.cpuUsage(before);
    return (used.user + used.system) / REQUESTS;
  };
  await block();
  const spent = await block();
  if (handled !== 2 * REQUESTS) throw new Error(`${handled} events handled of ${2 * REQUESTS}`);
  return spent;
}

/**
 * The Fetch entry with the spans and metrics of `instrumentWebhooks()`
 * written around it by hand: `webhook receive` around the entry,
 * `webhook handle <type>` made active around the handler, and the three
 * records at the answer, with the same attributes.
 */
function byHand(
  verifyWebhook: typeof import('../adapters/fetch.js').verifyWebhook,
  tracer: Tracer,
  meter: Meter,
  options: { readonly secret: string; readonly now: () => number; readonly dedup: false },
  handle: (event: WebhookEvent) => void,
): (request: Request) => Promise<Response> {
  const deliveries = meter.createCounter('webhook.deliveries');
  const durations = meter.createHistogram('webhook.delivery.duration', { unit: 's' });
  const skews = meter.createHistogram('webhook.timestamp.skew', { unit: 's' });
  const verified = createContextKey('verified delivery');
  const entry = verifyWebhook({
    ...options,
    on: {
      'message.received': (event: WebhookEvent, delivery: WebhookDelivery) => {
        const seen = context.active().getValue(verified) as { delivery?: WebhookDelivery };
        seen.delivery = delivery;
        const attributes = { 'webhook.entry': 'fetch', 'webhook.event.type': event.type, 'webhook.key.id': delivery.keyId };
        const span = tracer.startSpan(`webhook handle ${event.type}`, { kind: SpanKind.INTERNAL, attributes });
        try {
          context.with(trace.setSpan(context.active(), span), handle, undefined, event);
        } finally {
          span.end();
        }
      },
    },
  });
  return async (request) => {
    const span = tracer.startSpan('webhook receive', { kind: SpanKind.INTERNAL, attributes: { 'webhook.entry': 'fetch' } });
    const started = performance.now();
    const seen: { delivery?: WebhookDelivery } = {};
    const response = await context.with(trace.setSpan(context.active(), span).setValue(verified, seen), entry, undefined, request);
    const { delivery } = seen;
    const attributes: Attributes = {
      'webhook.outcome': response.status === 204 ? 'processed' : 'failed',
      'webhook.entry': 'fetch',
      'http.response.status_code': response.status,
      ...(delivery !== undefined && { 'webhook.event.type': delivery.event.type, 'webhook.key.id': delivery.keyId }),
    };
    if (delivery !== undefined) span.updateName(`webhook receive ${delivery.event.type}`);
    deliveries.add(1, attributes);
    durations.record((performance.now() - started) / 1000, attributes);
    if (delivery !== undefined) skews.record(Math.abs(options.now() - delivery.timestamp * 1000) / 1000, { ...attributes, 'webhook.timestamp.direction': 'behind' });
    span.setAttributes(attributes);
    if (response.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
    return response;
  };
}
