/**
 * What a receiver tells its operator, on Node's `diagnostics_channel`, the
 * way undici and Fastify publish: one message per delivery once its answer
 * is decided, a tracing channel around the user's code, and every store
 * failure. Nothing is built when nobody listens; a runtime without the
 * channels gets nothing published and nothing thrown.
 */
import * as diagnostics from 'node:diagnostics_channel';
import type { WebhookErrorCode, WebhookVerificationError } from '../core/errors.js';
import type { StoreOperation } from './claim.js';

/** The channel of `DeliveryMessage`s. */
export const DELIVERY_CHANNEL = 'svc-webhooks:delivery';
/** The tracing channel around each run of a handler or route (start, end, asyncStart, asyncEnd, error). */
export const HANDLER_CHANNEL = 'svc-webhooks:handler';
/** The channel of `StoreMessage`s. */
export const STORE_CHANNEL = 'svc-webhooks:store';

/** The entry that received a delivery. */
export type EntryName = 'express' | 'hono' | 'fastify' | 'fetch' | 'lambda';

/**
 * What became of a delivery: `processed` (the route or handler ran and the
 * answer is 2xx), `failed` (the route or the single handler answered non-2xx),
 * `duplicate`, `in_progress`, `unhandled` (a 2xx with no handler run: an
 * unknown type under `onUnknown: 'accept'`, or a known type without a
 * handler), or the code of the refusal.
 */
export type DeliveryOutcome = 'processed' | 'failed' | 'duplicate' | 'in_progress' | 'unhandled' | Exclude<WebhookErrorCode, 'delivery_in_progress'>;

/** Published on `svc-webhooks:delivery` for each request, once its answer is decided. */
export interface DeliveryMessage {
  readonly entry: EntryName;
  /** The HTTP status answered (by `onError`, when it answered a refusal). */
  readonly status: number;
  readonly outcome: DeliveryOutcome;
  /** The `webhook-id`, once verified; never from a request that failed verification. */
  readonly id?: string;
  /** The event's type, once verified. */
  readonly type?: string;
  /** Which secret verified it: the `id` of a keyed secret, else its position in the list (`'0'` for a lone one). */
  readonly keyId?: string;
  /** The tenant whose secret verified it, where the receiver serves many; absent otherwise. */
  readonly tenant?: string;
  /** The local clock minus `webhook-timestamp`, in seconds, for every request whose timestamp parsed, refused ones too. */
  readonly skewSeconds?: number;
  /** From the start of handling to the answer, in milliseconds. */
  readonly durationMs: number;
}

/** The context of `svc-webhooks:handler`'s events: which delivery's code runs. */
export interface HandlerTraceContext {
  readonly entry: EntryName;
  readonly id: string;
  readonly type: string;
  readonly keyId: string;
  /** The tenant, where the receiver serves many. */
  readonly tenant?: string;
}

/** Published on `svc-webhooks:store` for each failed store operation, retries included. */
export interface StoreMessage {
  readonly operation: StoreOperation;
  /** The event id (the dedup key) the operation was for; for a `lookup`, the request's unverified `webhook-id`. */
  readonly id: string;
  /** The tenant of the request, where the receiver serves many. */
  readonly tenant?: string;
  /** 1 for the first try, 2 for its first retry, and so on. */
  readonly attempt: number;
  readonly error: unknown;
}

/** A channel to publish on, or `undefined` where the runtime has none. */
export interface Publisher<T> {
  readonly hasSubscribers: boolean;
  publish(message: T): void;
}

/** The tracing channel, or `undefined` where the runtime has none. */
export interface Tracer<C extends object> {
  readonly hasSubscribers: boolean;
  tracePromise<T>(run: () => Promise<T>, context: C): Promise<T>;
}

/**
 * The outcome of an answer: a refusal's code (`in_progress` for a delivery
 * in progress), `failed` for any other non-2xx, and for a 2xx `processed`
 * when user code ran for it, else `unhandled`. A duplicate is the claim's
 * to tell.
 */
export function outcomeOf(status: number, error: WebhookVerificationError | undefined, ran: boolean): DeliveryOutcome {
  if (error !== undefined) return error.code === 'delivery_in_progress' ? 'in_progress' : error.code;
  if (status < 200 || status >= 300) return 'failed';
  return ran ? 'processed' : 'unhandled';
}

function publisher<T>(name: string): Publisher<T> | undefined {
  return typeof diagnostics.channel === 'function' ? (diagnostics.channel(name) as Publisher<T>) : undefined;
}

function tracer<C extends object>(name: string): Tracer<C> | undefined {
  const channel = typeof diagnostics.tracingChannel === 'function' ? diagnostics.tracingChannel(name) : undefined;
  // Older runtimes' tracing channels lack hasSubscribers: tracing them would cost every request.
  return channel !== undefined && typeof channel.hasSubscribers === 'boolean' ? (channel as unknown as Tracer<C>) : undefined;
}

export const deliveries = publisher<DeliveryMessage>(DELIVERY_CHANNEL);
export const handlerRuns = tracer<HandlerTraceContext>(HANDLER_CHANNEL);
export const storeFailures = publisher<StoreMessage>(STORE_CHANNEL);
