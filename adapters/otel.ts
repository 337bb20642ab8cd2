/**
 * svc-webhooks/otel: `instrumentWebhooks()` turns what every entry publishes
 * on `diagnostics_channel` into OpenTelemetry metrics and spans, and
 * `stop()` ends that. Only `@opentelemetry/api` is needed at run time (an
 * optional peer dependency); the global providers serve by default.
 *
 * - Metrics: `webhook.deliveries` (a counter), `webhook.delivery.duration`
 *   and `webhook.timestamp.skew` (histograms, in seconds),
 *   `webhook.store.failures` (a counter of failed dedup store operations)
 *   and `webhook.secret_lookup.failures` (a counter of failed secret
 *   lookups). A histogram takes no negative value, so the skew is recorded
 *   as its size, its sign in the attribute `webhook.timestamp.direction`:
 *   `behind` (the timestamp is older than the local clock) or `ahead`.
 * - Spans: one per delivery, `webhook receive <type>` (`webhook receive` for
 *   a refusal), opened when its handling starts as a child of the span
 *   active where the entry runs (the HTTP server span of your
 *   instrumentation), with an error status on a 5xx; and a child span,
 *   `webhook handle <type>`, around the run of the user's code, which runs
 *   with that span active: the spans it starts are its children, and
 *   without the request's baggage, which no signature covers. A handler's
 *   error is recorded on it as an exception, as thrown. Each span has the
 *   event's id, `webhook.id` (a refused request's `webhook-id` as sent),
 *   and its type, `webhook.event.type`, once known; the metrics have the
 *   type alone.
 * - Across a queue (`svc-webhooks/bullmq`, `svc-webhooks/pg-boss`), as
 *   OpenTelemetry's messaging conventions have it: `send <queue>` (a
 *   producer span) around each job `enqueue` queues, a child of the
 *   handler span; the job carries its W3C trace context (`traceparent`,
 *   `tracestate`, by the global propagator) and nothing else; and in the worker,
 *   `process <queue>` (a consumer span, a child of the send span) around
 *   each run of the job, its claim and settling included, with
 *   `webhook handle <type>` as its child around the handler. Each has
 *   `messaging.system`, `messaging.destination.name`,
 *   `messaging.operation.type` and, once known, `messaging.message.id`.
 * @packageDocumentation
 */
import { context, metrics, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type MeterProvider, type Span, type TracerProvider } from '@opentelemetry/api';
import { subscribe, tracingChannel, unsubscribe } from 'node:diagnostics_channel';
import {
  DELIVERY_CHANNEL,
  ENQUEUE_CHANNEL,
  HANDLER_CHANNEL,
  JOB_CHANNEL,
  SECRET_LOOKUP_CHANNEL,
  STORE_CHANNEL,
  type DeliveryTrace,
  type EnqueueTrace,
  type HandlerTrace,
  type JobTrace,
  type StoreMessage,
} from '../src/process/diagnostics.js';
import { checkOptionsObject } from '../src/base/option-checks.js';

/** Options of `instrumentWebhooks()`. */
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

/** What `instrumentWebhooks()` returns. */
export interface WebhookInstrumentation {
  /** Unsubscribes from every channel; calling it again does nothing. */
  stop(): void;
}

const SCOPE = 'svc-webhooks';
// Around the sender's 10 s answer window, where an answer starts to count as failed.
const DURATION_BOUNDARIES = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 7.5, 10, 15, 30];
// Up to and past the 300 s tolerance.
const SKEW_BOUNDARIES = [0, 1, 10, 60, 120, 240, 300, 600];

/** A delivery in progress: its span, and when its handling started, by `performance.now()`. */
interface Receiving {
  readonly span: Span;
  readonly started: number;
}

/**
 * Subscribes to the channels of every entry and records what they publish; returns how to stop. Throws
 * `WebhookOptionsError` for options that are no object.
 * @example
 * ```ts
 * // Once, after the OpenTelemetry SDK started, before the receiver takes requests.
 * import { instrumentWebhooks } from 'svc-webhooks/otel';
 *
 * const instrumentation = instrumentWebhooks();
 * process.on('SIGTERM', () => instrumentation.stop());
 * ```
 */
export function instrumentWebhooks(options: InstrumentWebhooksOptions = {}): WebhookInstrumentation {
  checkOptionsObject('instrumentWebhooks', options);
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
  const lookupFailures = meter.createCounter('webhook.secret_lookup.failures', { description: "Lookups of a tenant's secret that failed or timed out" });

  // Keyed on the channels' own context objects: each request's spans are its own, however many share an id.
  const receiving = new WeakMap<object, Receiving>();
  const handling = new WeakMap<object, Span>();
  const sending = new WeakMap<object, Span>();
  const processing = new WeakMap<object, Span>();

  const deliveryEvents = {
    start(message: unknown): void {
      const { entry } = message as DeliveryTrace;
      const span = tracer.startSpan('webhook receive', { kind: SpanKind.INTERNAL, attributes: { 'webhook.entry': entry } }, context.active());
      receiving.set(message as object, { span, started: performance.now() });
    },
    end(): void {},
    asyncStart(): void {},
    asyncEnd(message: unknown): void {
      const open = taken(receiving, message);
      if (open === undefined) return;
      const delivered = message as DeliveryTrace;
      const type = delivered.delivery?.event.type;
      if (type !== undefined) open.span.updateName(spanName(type));
      // A sender that hung up mid-body was answered nothing: the span ends, and no delivery is counted.
      // Not among the metrics' attributes: one value per event.
      if (delivered.id !== undefined) open.span.setAttribute('webhook.id', delivered.id);
      if (delivered.status !== undefined && delivered.outcome !== undefined) {
        const attributes = attributesOf(delivered, delivered.status, delivered.outcome);
        deliveries.add(1, attributes);
        durations.record((performance.now() - open.started) / 1000, attributes);
        const skewMs = delivered.skewMs;
        if (skewMs !== undefined) skews.record(Math.abs(skewMs) / 1000, { ...attributes, 'webhook.timestamp.direction': skewMs < 0 ? 'ahead' : 'behind' });
        open.span.setAttributes(attributes);
        if (delivered.status >= 500) open.span.setStatus({ code: SpanStatusCode.ERROR, message: delivered.outcome });
      }
      open.span.end();
    },
    error: (message: unknown) => failSpan(receiving.get(message as object)?.span, message),
  };

  const handlerEvents = {
    start(message: unknown): void {
      const run = message as HandlerTrace;
      const type = run.delivery.event.type;
      const parent = receiving.get(run.trace)?.span ?? processing.get(run.trace);
      // An HTTP instrumentation's propagator put the request's baggage header, which no signature covers, in its context.
      const base = propagation.deleteBaggage(context.active());
      const parentContext = parent === undefined ? base : trace.setSpan(base, parent);
      const attributes = { 'webhook.entry': run.entry, ...eventAttributes(run), 'webhook.key.id': run.delivery.keyId };
      const span = tracer.startSpan(`webhook handle ${type}`, { kind: SpanKind.INTERNAL, attributes }, parentContext);
      handling.set(message as object, span);
      // The user's code runs with this span active, so the spans it starts (a query, a call) are its children.
      runWithinSpan(run, trace.setSpan(parentContext, span));
    },
    end(): void {},
    asyncStart(): void {},
    asyncEnd(message: unknown): void {
      const span = taken(handling, message);
      if (span === undefined) return;
      const { failed, thrown } = message as HandlerTrace;
      if (thrown instanceof Error) span.recordException(thrown);
      if (failed === true) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    },
    error: (message: unknown) => failSpan(handling.get(message as object), message),
  };

  const enqueueEvents = {
    start(message: unknown): void {
      const job = message as EnqueueTrace;
      const attributes = { ...messagingAttributes(job, 'send'), ...eventAttributes(job) };
      const span = tracer.startSpan(`send ${job.queue}`, { kind: SpanKind.PRODUCER, attributes }, context.active());
      sending.set(message as object, span);
      // The job takes the send span's context along, for the worker's spans to continue.
      propagation.inject(trace.setSpan(context.active(), span), job.carrier);
    },
    end(): void {},
    asyncStart(): void {},
    asyncEnd(message: unknown): void {
      const span = taken(sending, message);
      if (span === undefined) return;
      const { jobId, outcome } = message as EnqueueTrace;
      if (jobId !== undefined) span.setAttribute('messaging.message.id', jobId);
      if (outcome !== undefined) span.setAttribute('webhook.enqueue.outcome', outcome);
      span.end();
    },
    error: (message: unknown) => failSpan(sending.get(message as object), message),
  };

  const jobEvents = {
    start(message: unknown): void {
      const job = message as JobTrace;
      // A child of the send span the job carries; a new trace for a job that carries none, whatever context
      // the worker was started in (its jobs' promises inherit that one).
      const parentContext = propagation.extract(ROOT_CONTEXT, job.carrier);
      const attributes = {
        ...messagingAttributes(job, 'process'),
        'messaging.message.id': job.jobId,
        ...eventAttributes(job),
        'webhook.key.id': job.delivery.keyId,
      };
      const span = tracer.startSpan(`process ${job.queue}`, { kind: SpanKind.CONSUMER, attributes }, parentContext);
      processing.set(message as object, span);
      runWithinSpan(job, trace.setSpan(parentContext, span));
    },
    end(): void {},
    asyncStart(): void {},
    asyncEnd(message: unknown): void {
      const span = taken(processing, message);
      if (span === undefined) return;
      const { outcome } = message as JobTrace;
      if (outcome !== undefined) span.setAttribute('webhook.job.outcome', outcome);
      if (outcome === 'failed') span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    },
    error(message: unknown): void {
      // BullMQ's worker postpones a job by throwing its DelayedError: no failure.
      if ((message as JobTrace).outcome !== 'postponed') failSpan(processing.get(message as object), message);
    },
  };

  const onStore = (message: unknown): void => {
    storeFailures.add(1, { 'webhook.store.operation': (message as StoreMessage).operation });
  };
  const onLookup = (): void => {
    lookupFailures.add(1);
  };

  const subscriptions = [
    { channel: tracingChannel(DELIVERY_CHANNEL), events: deliveryEvents },
    { channel: tracingChannel(HANDLER_CHANNEL), events: handlerEvents },
    { channel: tracingChannel(ENQUEUE_CHANNEL), events: enqueueEvents },
    { channel: tracingChannel(JOB_CHANNEL), events: jobEvents },
  ];
  for (const { channel, events } of subscriptions) channel.subscribe(events);
  subscribe(STORE_CHANNEL, onStore);
  subscribe(SECRET_LOOKUP_CHANNEL, onLookup);

  return {
    // Unsubscribing what is no longer subscribed does nothing: a second stop needs no guard.
    stop() {
      for (const { channel, events } of subscriptions) channel.unsubscribe(events);
      unsubscribe(STORE_CHANNEL, onStore);
      unsubscribe(SECRET_LOOKUP_CHANNEL, onLookup);
    },
  };
}

/** Records a channel's error on the span open for its context, if any. */
function failSpan(span: Span | undefined, message: unknown): void {
  const { error } = message as { error?: unknown };
  if (span === undefined) return;
  if (error instanceof Error) span.recordException(error);
  span.setStatus({ code: SpanStatusCode.ERROR });
}

/** What `open` holds for a channel's context, removed from it: the context's run has ended. */
function taken<T>(open: WeakMap<object, T>, message: unknown): T | undefined {
  const value = open.get(message as object);
  open.delete(message as object);
  return value;
}

/**
 * Has the code a trace's publisher runs with `runWithin` run with `active`
 * as its context, inside whatever `runWithin` an earlier subscriber set.
 */
function runWithinSpan(target: HandlerTrace | JobTrace, active: Context): void {
  const outer = target.runWithin;
  target.runWithin = (code) => context.with(active, outer === undefined ? code : () => outer(code));
}

/** The messaging conventions' attributes of a job's span. */
function messagingAttributes({ system, queue }: EnqueueTrace | JobTrace, operation: 'send' | 'process'): Attributes {
  return { 'messaging.system': system, 'messaging.destination.name': queue, 'messaging.operation.type': operation, 'messaging.operation.name': operation };
}

/** The attributes naming the event of a run or a job: its id and type. */
function eventAttributes({ delivery }: Pick<HandlerTrace, 'delivery'>): Attributes {
  return { 'webhook.id': delivery.id, 'webhook.event.type': delivery.event.type };
}

function spanName(type: string): string {
  return `webhook receive ${type}`;
}

function attributesOf({ entry, delivery }: DeliveryTrace, status: number, outcome: string): Attributes {
  return {
    'webhook.outcome': outcome,
    'webhook.entry': entry,
    'http.response.status_code': status,
    ...(delivery !== undefined && { 'webhook.event.type': delivery.event.type, 'webhook.key.id': delivery.keyId }),
  };
}
