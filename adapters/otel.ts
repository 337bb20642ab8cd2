/**
 * svc-webhooks/otel: `instrumentWebhooks()` turns what every entry publishes
 * on `diagnostics_channel` into OpenTelemetry metrics and spans, and
 * `stop()` ends that. Only `@opentelemetry/api` is needed at run time (an
 * optional peer dependency); the global providers serve by default.
 *
 * - Metrics: `webhook.deliveries` (a counter), `webhook.delivery.duration`
 *   and `webhook.timestamp.skew` (histograms, in seconds), and
 *   `webhook.store.failures` (a counter). A histogram takes no negative
 *   value, so the skew is recorded as its size, its sign in the attribute
 *   `webhook.timestamp.direction`: `behind` (the timestamp is older than the
 *   local clock) or `ahead`.
 * - Spans: one per delivery, `webhook receive <type>` (`webhook receive` for
 *   a refusal), a child of the span active where the entry runs (the HTTP
 *   server span of your instrumentation), with an error status on a 5xx;
 *   and a child span, `webhook handle <type>`, around the run of the
 *   handler or route. The delivery span starts when the handler does (or is
 *   dated back by the delivery's duration when no handler ran), since the
 *   channels tell the delivery only once it is answered. The handler span
 *   is not made the active context of your code: the API alone gives no
 *   way to bind it to the tracing channel.
 */
import { context, metrics, SpanKind, SpanStatusCode, trace, type Attributes, type MeterProvider, type Span, type TracerProvider } from '@opentelemetry/api';
import { subscribe, tracingChannel, unsubscribe } from 'node:diagnostics_channel';
import {
  DELIVERY_CHANNEL,
  HANDLER_CHANNEL,
  STORE_CHANNEL,
  type DeliveryMessage,
  type HandlerTraceContext,
  type StoreMessage,
} from '../src/receive/diagnostics.js';

export interface InstrumentWebhooksOptions {
  /**
   * Where the metrics go.
   * @default the global meter provider (`metrics.getMeterProvider()`)
   */
  readonly meterProvider?: MeterProvider;
  /**
   * Where the spans go.
   * @default the global tracer provider (`trace.getTracerProvider()`)
   */
  readonly tracerProvider?: TracerProvider;
}

export interface WebhookInstrumentation {
  /** Unsubscribes from every channel; calling it again does nothing. */
  stop(): void;
}

const SCOPE = 'svc-webhooks';
// Around the sender's 10 s answer window, where an answer starts to count as failed.
const DURATION_BOUNDARIES = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 7.5, 10, 15, 30];
// Up to and past the 300 s tolerance.
const SKEW_BOUNDARIES = [0, 1, 10, 60, 120, 240, 300, 600];

/** A delivery's handler run in progress: its spans, by the tracing context object the channel hands each event. */
interface Running {
  readonly delivery: Span;
  readonly handler: Span;
}

/** Subscribes to the channels of every entry and records what they publish; returns how to stop. */
export function instrumentWebhooks(options: InstrumentWebhooksOptions = {}): WebhookInstrumentation {
  const meter = (options.meterProvider ?? metrics.getMeterProvider()).getMeter(SCOPE);
  const tracer = (options.tracerProvider ?? trace.getTracerProvider()).getTracer(SCOPE);
  const deliveries = meter.createCounter('webhook.deliveries', { description: 'Webhook deliveries answered, by outcome' });
  const durations = meter.createHistogram('webhook.delivery.duration', {
    description: 'From the start of handling a delivery to its answer',
    unit: 's',
    advice: { explicitBucketBoundaries: DURATION_BOUNDARIES },
  });
  const skews = meter.createHistogram('webhook.timestamp.skew', {
    description: 'The local clock minus webhook-timestamp',
    unit: 's',
    advice: { explicitBucketBoundaries: SKEW_BOUNDARIES },
  });
  const storeFailures = meter.createCounter('webhook.store.failures', { description: 'Dedup store operations that failed, retries included' });

  // The delivery span a handler run opened, until its delivery is told: one id runs once at a time per entry.
  const open = new Map<string, Span>();
  const running = new WeakMap<object, Running>();

  const onDelivery = (message: unknown): void => {
    const delivery = message as DeliveryMessage;
    const attributes = attributesOf(delivery);
    deliveries.add(1, attributes);
    durations.record(delivery.durationMs / 1000, attributes);
    const skew = delivery.skewSeconds;
    if (skew !== undefined) skews.record(Math.abs(skew), { ...attributes, 'webhook.timestamp.direction': skew < 0 ? 'ahead' : 'behind' });
    const key = delivery.id === undefined ? undefined : `${delivery.entry} ${delivery.id}`;
    const started = key === undefined ? undefined : open.get(key);
    if (key !== undefined) open.delete(key);
    const span =
      started ??
      tracer.startSpan(spanName(delivery.type), { kind: SpanKind.INTERNAL, startTime: Date.now() - delivery.durationMs }, context.active());
    span.setAttributes(attributes);
    if (delivery.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR, message: delivery.outcome });
    span.end();
  };

  const onStore = (message: unknown): void => {
    const { operation } = message as StoreMessage;
    storeFailures.add(1, { 'webhook.store.operation': operation });
  };

  const handlerEvents = {
    start(message: unknown): void {
      const run = message as HandlerTraceContext;
      const attributes = { 'webhook.entry': run.entry, 'webhook.event.type': run.type, 'webhook.key.id': run.keyId };
      const delivery = tracer.startSpan(spanName(run.type), { kind: SpanKind.INTERNAL, attributes }, context.active());
      open.set(`${run.entry} ${run.id}`, delivery);
      const handler = tracer.startSpan(`webhook handle ${run.type}`, { kind: SpanKind.INTERNAL, attributes }, trace.setSpan(context.active(), delivery));
      running.set(run as object, { delivery, handler });
    },
    end(): void {},
    asyncStart(): void {},
    asyncEnd(message: unknown): void {
      const run = running.get(message as object);
      if (run === undefined) return;
      running.delete(message as object);
      const { status } = ((message as { result?: { status?: unknown } }).result ?? {}) as { status?: unknown };
      if (typeof status === 'number' && status >= 500) run.handler.setStatus({ code: SpanStatusCode.ERROR });
      run.handler.end();
    },
    error(message: unknown): void {
      const run = running.get(message as object);
      const { error } = message as { error?: unknown };
      if (run === undefined) return;
      if (error instanceof Error) run.handler.recordException(error);
      run.handler.setStatus({ code: SpanStatusCode.ERROR });
    },
  };

  subscribe(DELIVERY_CHANNEL, onDelivery);
  subscribe(STORE_CHANNEL, onStore);
  const handlers = tracingChannel(HANDLER_CHANNEL);
  handlers.subscribe(handlerEvents);

  let stopped = false;
  return {
    stop() {
      if (stopped) return;
      stopped = true;
      unsubscribe(DELIVERY_CHANNEL, onDelivery);
      unsubscribe(STORE_CHANNEL, onStore);
      handlers.unsubscribe(handlerEvents);
    },
  };
}

function spanName(type: string | undefined): string {
  return type === undefined ? 'webhook receive' : `webhook receive ${type}`;
}

function attributesOf(delivery: DeliveryMessage): Attributes {
  return {
    'webhook.outcome': delivery.outcome,
    'webhook.entry': delivery.entry,
    'http.response.status_code': delivery.status,
    ...(delivery.type !== undefined && { 'webhook.event.type': delivery.type }),
    ...(delivery.keyId !== undefined && { 'webhook.key.id': delivery.keyId }),
  };
}
