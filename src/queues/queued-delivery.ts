/**
 * What a queue's job carries for one verified delivery, on every engine:
 * the delivery itself, so that a worker's handlers get what a receiver's
 * `on` would have given them, and the trace context it was queued in. Plain
 * JSON, so that a job left in the failed state can be read, and retried, by
 * hand.
 */
import type { WebhookDelivery } from '../core/delivery.js';
import { isWebhookEvent } from '../core/event.js';

/** The data of the job `enqueue` adds for a delivery (on BullMQ and on pg-boss). */
export interface QueuedDelivery {
  /** The delivery as the receiver verified it; its event as verified, before any schema. */
  readonly delivery: WebhookDelivery;
  /**
   * The W3C trace context for the worker (`traceparent`, `tracestate`, and
   * no other header), when a subscriber of the enqueue channel gave one:
   * `svc-webhooks/otel` puts its send span's here, so that the worker's
   * spans continue the receiver's trace.
   */
  readonly trace?: Readonly<Record<string, string>>;
}

/** The job's data for `delivery`, with `carrier` as its `trace` unless empty: only the fields it has, since JSON keeps no `undefined`. */
export function queuedDelivery({ event, id, timestamp, keyId, tenant, dedupKey }: WebhookDelivery, carrier: Readonly<Record<string, string>> = {}): QueuedDelivery {
  const delivery = tenant === undefined ? { event, id, timestamp, keyId, dedupKey } : { event, id, timestamp, keyId, tenant, dedupKey };
  return Object.keys(carrier).length === 0 ? { delivery } : { delivery, trace: { ...carrier } };
}

/**
 * Whether a job's data is a queued delivery: an event that holds the
 * envelope a verified request must (`isWebhookEvent`), with the fields of a
 * delivery of that event. A job another program put in the queue is not:
 * running handlers on it would give them what their types do not promise.
 */
export function isQueuedDelivery(data: unknown): data is QueuedDelivery {
  const delivery = (data as { delivery?: unknown } | null)?.delivery as Partial<Record<keyof WebhookDelivery, unknown>> | null | undefined;
  if (typeof delivery !== 'object' || delivery === null) return false;
  const { event, id, timestamp, keyId, tenant, dedupKey } = delivery;
  return (
    isWebhookEvent(event) &&
    event.id === id &&
    Number.isSafeInteger(timestamp) &&
    typeof keyId === 'string' &&
    (tenant === undefined || typeof tenant === 'string') &&
    typeof dedupKey === 'string' &&
    dedupKey.endsWith(`:${event.id}`)
  );
}
