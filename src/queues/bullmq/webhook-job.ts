/**
 * What a queued event's job holds: the event as verified, and what its
 * handlers learn besides it. Written by `enqueue`, read back by the worker.
 */
import type { WebhookEvent } from '../../core/event.js';
import type { HandlerContext } from '../../receive/handler-types.js';

/**
 * The data of the job `enqueue` adds for an event: the event as verified,
 * untouched, and its context (the `webhook-id`, the secret's `keyId`, the
 * `tenant`), so that the worker's handlers get the same context a handler
 * of `on` would have got. JSON throughout: a job in the failed set shows it.
 */
export interface WebhookJobData {
  /** The event as verified, before any schema. */
  readonly event: WebhookEvent;
  /** What the event's handlers get besides it: `id`, and `keyId` and `tenant` where they are set. */
  readonly context: HandlerContext;
}

/** The context as stored: only the fields that are set, since JSON has no `undefined`. */
export function jobData(event: WebhookEvent, { id, keyId, tenant }: HandlerContext): WebhookJobData {
  return { event, context: { id, ...(keyId !== undefined && { keyId }), ...(tenant !== undefined && { tenant }) } };
}

/**
 * Reads a job's data back. Throws `TypeError` for data no `enqueue` wrote
 * (a job someone added by hand to the queue): running handlers on it would
 * give them what their types do not promise.
 */
export function readJobData(data: unknown): WebhookJobData {
  const { event, context } = (data ?? {}) as Partial<Record<keyof WebhookJobData, Record<string, unknown>>>;
  const optional = (value: unknown): boolean => value === undefined || typeof value === 'string';
  if (
    typeof event !== 'object' ||
    event === null ||
    typeof event.id !== 'string' ||
    typeof event.type !== 'string' ||
    typeof context !== 'object' ||
    context === null ||
    context.id !== event.id ||
    !optional(context.keyId) ||
    !optional(context.tenant)
  ) {
    throw new TypeError('svc-webhooks: this job was not added by enqueue(): its data is not { event, context } of one event');
  }
  return data as WebhookJobData;
}
