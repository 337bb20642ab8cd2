/** Cloudflare Queues batches made by hand, each message recording whether it was acked or retried, and with what delay. */
import type { QueueBatch, QueueMessage } from '../../src/queues/cloudflare/queue-types.js';

/** What became of a message: acked, or retried (with its delay, when one was given). */
export type Settled = 'ack' | { readonly retry: number | undefined };

/** A message of `body` and what its handler made of it, in order. */
export interface RecordedMessage extends QueueMessage {
  readonly settled: Settled[];
}

/** A message with id `id`, recording each ack and retry. */
export function recordedMessage(id: string, body: unknown): RecordedMessage {
  const settled: Settled[] = [];
  return {
    id,
    body,
    settled,
    ack: () => void settled.push('ack'),
    retry: (options) => void settled.push({ retry: options?.delaySeconds }),
  };
}

/** A batch of the queue `webhooks` holding `messages`. */
export function batchOf(...messages: QueueMessage[]): QueueBatch {
  return { queue: 'webhooks', messages };
}
