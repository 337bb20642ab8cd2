/**
 * What a queue's job carries for one verified event, on every engine: the
 * event as verified and what its handlers learn besides it, so that a
 * worker's handlers get the context a receiver's `on` would have given them.
 * Plain JSON, so that a job left in the failed state can be read, and
 * retried, by hand.
 */
import type { WebhookEvent } from '../core/event.js';
import type { HandlerContext } from '../receive/handler-types.js';

/** The data of the job `enqueue` adds for an event. */
export interface QueuedEvent {
  /** The event as verified, before any schema. */
  readonly event: WebhookEvent;
  /** What the event's handlers get besides it: `id`, and `keyId` and `tenant` where they are set. */
  readonly context: HandlerContext;
}

/** The job's data for `event`, received with `context`: only the context's fields that are set, since JSON has no `undefined`. */
export function queuedEvent(event: WebhookEvent, { id, keyId, tenant }: HandlerContext): QueuedEvent {
  return { event, context: { id, ...(keyId !== undefined && { keyId }), ...(tenant !== undefined && { tenant }) } };
}

/**
 * Whether a job's data is a queued event. A job another program put in the
 * queue is not: running handlers on it would give them what their types do
 * not promise.
 */
export function isQueuedEvent(data: unknown): data is QueuedEvent {
  const { event, context } = (data ?? {}) as Partial<Record<keyof QueuedEvent, Record<string, unknown>>>;
  const optionalString = (value: unknown): boolean => value === undefined || typeof value === 'string';
  return (
    typeof event === 'object' &&
    event !== null &&
    typeof event.id === 'string' &&
    typeof event.type === 'string' &&
    typeof context === 'object' &&
    context !== null &&
    context.id === event.id &&
    optionalString(context.keyId) &&
    optionalString(context.tenant)
  );
}
