/**
 * What a receiver and a queue's worker tell their operator on Node's
 * `diagnostics_channel`, the way undici and Fastify publish: a tracing
 * channel around each delivery, from the start of its handling to its
 * answer; one around each run of the user's code; one around each job a
 * handoff queues, and one around each job a worker runs; and every failure
 * of a dedup store or a secret lookup. Nothing is built while nobody listens; a runtime without
 * the channels gets nothing published and nothing thrown.
 */
import * as diagnostics from 'node:diagnostics_channel';
import type { WebhookDelivery } from '../core/delivery.js';
import type { WebhookErrorCode } from '../core/errors.js';
import type { StoreOperation } from '../stores/dedup-store.js';

/** The tracing channel of each delivery (start, end, asyncStart, asyncEnd, error); its context is a `DeliveryTrace`. */
export const DELIVERY_CHANNEL = 'svc-webhooks:delivery';
/** The tracing channel around each run of the user's code for a delivery (start, end, asyncStart, asyncEnd, error); its context is a `HandlerTrace`. */
export const HANDLER_CHANNEL = 'svc-webhooks:handler';
/** The tracing channel around each job an `enqueue` handoff queues (start, end, asyncStart, asyncEnd, error); its context is an `EnqueueTrace`. */
export const ENQUEUE_CHANNEL = 'svc-webhooks:enqueue';
/** The tracing channel around each job a queue's `work` runs (start, end, asyncStart, asyncEnd, error); its context is a `JobTrace`. */
export const JOB_CHANNEL = 'svc-webhooks:job';
/** The channel of `StoreMessage`s: each failed operation of a dedup store. */
export const STORE_CHANNEL = 'svc-webhooks:store';
/** The channel of `SecretLookupMessage`s: each failed lookup of a tenant's secret. */
export const SECRET_LOOKUP_CHANNEL = 'svc-webhooks:secret-lookup';

/** The entry that received a delivery. */
export type EntryName = 'express' | 'hono' | 'fastify' | 'fetch' | 'lambda' | 'azure' | 'h3';

/** The queue engine of a handoff or a worker. */
export type QueueSystem = 'bullmq' | 'pg-boss' | 'cloudflare';

/**
 * What became of a delivery: `processed` (the route or a handler ran and
 * the answer is 2xx), `queued` (a handoff recorded it), `failed` (the route
 * or the single handler answered non-2xx), `duplicate`, `stale` (with
 * `ordering`: a higher version of its object was processed, and nothing
 * ran), `in_progress`, `unhandled` (a 2xx with no handler run: an unknown type under
 * `unknownEvents: 'accept'`, or a known type without a handler), or the
 * code of the refusal.
 */
export type DeliveryOutcome =
  | 'processed'
  | 'queued'
  | 'failed'
  | 'duplicate'
  | 'stale'
  | 'in_progress'
  | 'unhandled'
  | Exclude<WebhookErrorCode, 'delivery_in_progress'>;

/**
 * The context of `svc-webhooks:delivery`'s events: one object per request,
 * the same at its `start` and its `asyncEnd`, filled in as the request goes.
 * A request whose sender hung up mid-body publishes `start` and `asyncEnd`
 * without a `status`: nobody was answered.
 */
export interface DeliveryTrace {
  /** The entry that received the request. */
  readonly entry: EntryName;
  /** The verified delivery: set once verified, never for a request that failed verification. */
  readonly delivery?: WebhookDelivery;
  /**
   * The request's `webhook-id` header, for every answered request that has one, refused ones too: the id the
   * sender's delivery log shows. Verified only where `delivery` is set. Set by `asyncEnd`.
   */
  readonly id?: string;
  /** The HTTP status answered (by `onError`, when it answered a refusal): set by `asyncEnd`. */
  readonly status?: number;
  /** What became of the delivery: set by `asyncEnd`. */
  readonly outcome?: DeliveryOutcome;
  /** The local clock minus `webhook-timestamp`, in milliseconds, for every request whose timestamp parsed, refused ones too: set by `asyncEnd`. */
  readonly skewMs?: number;
}

/** The context of `svc-webhooks:handler`'s events: whose code runs, for which delivery. */
export interface HandlerTrace {
  /** The entry that received the delivery, or the queue engine whose worker runs it. */
  readonly entry: EntryName | QueueSystem;
  /** The delivery the code runs for. */
  readonly delivery: WebhookDelivery;
  /** The trace of the request the code runs for, or of the job a worker runs. */
  readonly trace: DeliveryTrace | JobTrace;
  /** The HTTP status the code's outcome leads to (the route's or handler's own, or the one decided for it); never in a worker: set by `asyncEnd`. */
  readonly status?: number;
  /** Whether the code failed: it threw, its event failed its schema, or its answer was a 5xx: set by `asyncEnd`. */
  readonly failed?: boolean;
  /**
   * What a handler of `on`, `onUnknownEvent` or the Fetch, Lambda, Azure or h3 handler threw or rejected
   * with, as it did, where the run failed so (a `handler_failed`): set by `asyncEnd`. A route's error is
   * the route's framework's; it is published on the channel's `error` when the route rejects.
   */
  readonly thrown?: unknown;
  /**
   * Set by a subscriber at `start` to run the user's code within a context
   * of its own (`svc-webhooks/otel` makes its handler span the active one,
   * so spans the code starts are its children). The code runs as
   * `runWithin(code)`. A second subscriber wraps the first's: it calls the
   * `runWithin` it found with `code` inside its own.
   */
  runWithin?: <T>(code: () => T) => T;
}

/**
 * The context of `svc-webhooks:enqueue`'s events: one job a handoff queues
 * for a delivery, inside the delivery's `svc-webhooks:handler` run.
 */
export interface EnqueueTrace {
  /** The queue engine. */
  readonly system: QueueSystem;
  /** The queue's name. */
  readonly queue: string;
  /** The delivery the job carries. */
  readonly delivery: WebhookDelivery;
  /**
   * Filled by subscribers at `start` with the W3C trace context the job is
   * to carry to its worker (`traceparent`, `tracestate`), as
   * `svc-webhooks/otel` writes its send span's: the job carries these two
   * headers alone, no `baggage` nor any other. Left empty, the job carries
   * nothing more than its delivery.
   */
  readonly carrier: Record<string, string>;
  /** The job's id, once the engine gave it (BullMQ's is known at once; Cloudflare Queues give none at send): set by `asyncEnd`. */
  readonly jobId?: string;
  /** `queued`, or `duplicate` for an event queued before (no job sent): set by `asyncEnd`. */
  readonly outcome?: 'queued' | 'duplicate';
}

/** What became of a job a worker ran: its handler ran, or had run before, or was skipped as stale (`ordering`), or failed; or the job waits for another worker's claim. */
export type JobOutcome = 'processed' | 'duplicate' | 'stale' | 'failed' | 'postponed';

/**
 * The context of `svc-webhooks:job`'s events: one run of a job `enqueue`
 * queued, by a worker, from its claim to its settling. The run of the
 * user's code within it is an `svc-webhooks:handler` run whose `trace` is
 * this object.
 */
export interface JobTrace {
  /** The queue engine. */
  readonly system: QueueSystem;
  /** The queue's name. */
  readonly queue: string;
  /** The job's id. */
  readonly jobId: string;
  /** The delivery the job carries. */
  readonly delivery: WebhookDelivery;
  /** The W3C trace context the job carried beside its delivery (`traceparent`, `tracestate` of `EnqueueTrace.carrier` at its `enqueue`); empty for a job queued without. */
  readonly carrier: Readonly<Record<string, string>>;
  /** What became of the run: set by `asyncEnd`. */
  readonly outcome?: JobOutcome;
  /** As `HandlerTrace.runWithin`: set by a subscriber at `start` to run the job (its claim, its handler, its settling) within a context of its own. */
  runWithin?: <T>(code: () => T) => T;
}

/** Published on `svc-webhooks:store` for each failed operation of a dedup store, retries included. */
export interface StoreMessage {
  /** Which operation failed. */
  readonly operation: StoreOperation;
  /** The dedup key the operation was for (a delivery's `dedupKey`). */
  readonly key: string;
  /** The tenant of the delivery, where the receiver serves many. */
  readonly tenant?: string;
  /** 1 for the first try, 2 for its first retry, and so on. */
  readonly attempt: number;
  /** What the store threw or rejected with. */
  readonly error: unknown;
}

/** Published on `svc-webhooks:secret-lookup` for each lookup of a tenant's secret that failed or timed out, and each `tenants.of` that threw. */
export interface SecretLookupMessage {
  /** The request's `webhook-id`, not yet verified. */
  readonly id: string;
  /** The tenant whose secret was looked up; absent when `tenants.of` threw. */
  readonly tenant?: string;
  /** What the lookup (or `tenants.of`) threw or rejected with, or the timeout's error. */
  readonly error: unknown;
}

/** A channel to publish on. */
export interface Publisher<T> {
  readonly hasSubscribers: boolean;
  publish(message: T): void;
}

/** A tracing channel to trace on. */
export interface Tracer<C extends object> {
  readonly hasSubscribers: boolean;
  tracePromise<T>(run: () => Promise<T>, context: C): Promise<T>;
}

/**
 * Runs `code` within the context the subscribers of a trace gave it with
 * `runWithin` at `start` (`HandlerTrace`, `JobTrace`), or as it is when none did.
 */
export function runWithinTrace<T>(trace: { readonly runWithin?: <U>(code: () => U) => U }, code: () => T): T {
  const { runWithin } = trace;
  return runWithin === undefined ? code() : runWithin(code);
}

function publisher<T>(name: string): Publisher<T> | undefined {
  return typeof diagnostics.channel === 'function' ? (diagnostics.channel(name) as Publisher<T>) : undefined;
}

function tracer<C extends object>(name: string): Tracer<C> | undefined {
  const channel = typeof diagnostics.tracingChannel === 'function' ? diagnostics.tracingChannel(name) : undefined;
  // Older runtimes' tracing channels lack hasSubscribers: tracing them would cost every request.
  return channel !== undefined && typeof channel.hasSubscribers === 'boolean' ? (channel as unknown as Tracer<C>) : undefined;
}

/** The channels, or `undefined` where the runtime has none. */
export const deliveryTraces = tracer<DeliveryTrace>(DELIVERY_CHANNEL);
export const handlerRuns = tracer<HandlerTrace>(HANDLER_CHANNEL);
export const enqueueRuns = tracer<EnqueueTrace>(ENQUEUE_CHANNEL);
export const jobRuns = tracer<JobTrace>(JOB_CHANNEL);
export const storeFailures = publisher<StoreMessage>(STORE_CHANNEL);
export const lookupFailures = publisher<SecretLookupMessage>(SECRET_LOOKUP_CHANNEL);
