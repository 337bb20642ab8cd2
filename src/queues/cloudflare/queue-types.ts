/**
 * Cloudflare Queues as this entry sees them, told by their shape so that
 * nothing of `@cloudflare/workers-types` is imported: the producer binding
 * `enqueue` sends on, and the batch a consumer Worker's `queue` handler
 * gets. Workers' own `Queue`, `MessageBatch` and `Message` fit them.
 */
import type { QueuedDelivery } from '../queued-delivery.js';

/** The options of a send that `enqueue` gives. */
export interface QueueSendOptions {
  /** How the body is kept: `'json'`, so that a message in the dashboard or a dead-letter queue reads as JSON. */
  readonly contentType: 'json';
}

/** The part of a Worker's queue producer binding (`env.QUEUE`, Workers' `Queue`) that `enqueue` uses. */
export interface QueueProducer {
  /** Sends one message; resolves once the queue holds it. */
  send(body: QueuedDelivery, options: QueueSendOptions): Promise<unknown>;
}

/** The part of Workers' `Message` that `work` uses: one message of a batch. */
export interface QueueMessage {
  /** The message's id, given by the queue. */
  readonly id: string;
  /** What was sent: a `QueuedDelivery` when `enqueue` sent it. */
  readonly body: unknown;
  /** Marks the message handled: the queue never delivers it again. */
  ack(): void;
  /** Delivers the message again, after `delaySeconds` when given; once out of the queue's `max_retries`, to its dead-letter queue. */
  retry(options?: { delaySeconds?: number }): void;
}

/** The part of Workers' `MessageBatch` that `work` uses. */
export interface QueueBatch {
  /** The queue's name. */
  readonly queue: string;
  /** The batch's messages. */
  readonly messages: readonly QueueMessage[];
}
