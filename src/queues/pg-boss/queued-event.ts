/**
 * What a job of this entry carries: the verified event and what its handlers
 * learn besides it. Plain JSON, so that a job left in the failed state can be
 * read, and retried, by hand.
 */
import type { WebhookEvent } from '../../core/event.js';
import type { HandlerContext } from '../../receive/handler-types.js';

/** The data of each job `enqueue` sends. */
export interface QueuedEvent {
  /** The event as verified, before any schema. */
  readonly event: WebhookEvent;
  /** The verified `webhook-id` (`HandlerContext.id`). */
  readonly id: string;
  /** Which secret verified it, when the receiver has keyed secrets. */
  readonly keyId?: string;
  /** The tenant whose endpoint received it, where the receiver serves many. */
  readonly tenant?: string;
}

/** The job's data for `event`, received with `context`: only the context's fields that are set. */
export function queuedEvent(event: WebhookEvent, { id, keyId, tenant }: HandlerContext): QueuedEvent {
  return { event, id, ...(keyId !== undefined && { keyId }), ...(tenant !== undefined && { tenant }) };
}

/** The handlers' context of a queued event, as the receiver's handlers would have had it. */
export function contextOf({ id, keyId, tenant }: QueuedEvent): HandlerContext {
  return { id, ...(keyId !== undefined && { keyId }), ...(tenant !== undefined && { tenant }) };
}

/** Whether a job's data is a queued event: a job sent by other code into the queue is not. */
export function isQueuedEvent(data: unknown): data is QueuedEvent {
  if (typeof data !== 'object' || data === null) return false;
  const { event, id, keyId, tenant } = data as Partial<Record<keyof QueuedEvent, unknown>>;
  const optionalString = (value: unknown): boolean => value === undefined || typeof value === 'string';
  return (
    typeof id === 'string' &&
    optionalString(keyId) &&
    optionalString(tenant) &&
    typeof event === 'object' &&
    event !== null &&
    typeof (event as { type?: unknown }).type === 'string' &&
    (event as { id?: unknown }).id === id
  );
}
