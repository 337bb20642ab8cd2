/**
 * The receiving side: a `Handoff` that sends one Cloudflare Queues message
 * per delivery on a Worker's producer binding, and resolves once the queue
 * holds it.
 */
import { beforeDeadline } from '../../base/deadlines.js';
import { checkDuration, checkOptionsObject, MAX_TIMER_MS } from '../../base/option-checks.js';
import { WebhookOptionsError } from '../../base/options-error.js';
import type { WebhookDelivery } from '../../core/delivery.js';
import type { Handoff } from '../../process/handoff.js';
import { queueDelivery } from '../queue-traces.js';
import type { QueueProducer, QueueSendOptions } from './queue-types.js';

/** Options of `enqueue()`. */
export interface CloudflareEnqueueOptions {
  /**
   * The queue's name, which traces give as the message's destination: a
   * producer binding does not know it.
   * @default ''
   */
  readonly queueName?: string;
  /**
   * How long, in milliseconds, the receiver waits for the queue to take
   * the message before it answers 503 `handoff_failed`, within the
   * sender's 10 s. A message whose send timed out may still land: the
   * retry then sends a second, and the worker's dedup store runs the
   * handler once either way.
   * @default 2000
   */
  readonly timeoutMs?: number;
}

const SEND_OPTIONS: QueueSendOptions = Object.freeze({ contentType: 'json' });

/**
 * A `Handoff` for the `handoff` option of the Fetch and Hono entries on a
 * Worker: each verified delivery becomes one message on `queue` (a producer
 * binding, `env.QUEUE`), its body the `QueuedDelivery` (the delivery, and
 * the trace context where a tracer gave one), sent as JSON. The receiver
 * sends it under the delivery's claim and answers 202 once `send`
 * resolved; when the send fails or takes longer than `timeoutMs` it
 * releases the claim and answers 503 with `Retry-After`, and the sender
 * retries. Cloudflare Queues deliver at least once: `work()` runs each
 * event once through its dedup store. Throws `WebhookOptionsError` for a
 * queue without `send` or bad options.
 *
 * @example
 * ```ts
 * import { enqueue, type QueueProducer } from 'svc-webhooks/cloudflare';
 * import { verifyWebhook } from 'svc-webhooks/fetch';
 *
 * interface Env { WEBHOOKS: QueueProducer; WEBHOOK_SECRET: string }
 *
 * export default {
 *   fetch(request: Request, env: Env, ctx: { waitUntil(promise: Promise<unknown>): void }) {
 *     return verifyWebhook({ secret: env.WEBHOOK_SECRET, handoff: enqueue(env.WEBHOOKS) })(request, env, ctx);
 *   },
 * };
 * ```
 */
export function enqueue(queue: QueueProducer, options: CloudflareEnqueueOptions = {}): Handoff {
  if (typeof queue !== 'object' || queue === null || typeof queue.send !== 'function') {
    throw new WebhookOptionsError('svc-webhooks: enqueue needs a Cloudflare queue producer binding (env.QUEUE, with a send method)');
  }
  checkOptionsObject('enqueue', options);
  const { queueName = '', timeoutMs = 2_000 } = options;
  if (typeof queueName !== 'string') throw new WebhookOptionsError('svc-webhooks: enqueue options.queueName must be a string');
  checkDuration('timeoutMs', timeoutMs, MAX_TIMER_MS);
  return {
    hand(delivery: WebhookDelivery): Promise<void | 'duplicate'> {
      return queueDelivery('cloudflare', queueName, delivery, async (body) => {
        const late = await beforeDeadline(queue.send(body, SEND_OPTIONS).then(() => false), timeoutMs, () => true);
        if (late) throw new Error(`svc-webhooks: the queue did not take the message within ${timeoutMs} ms`);
        // The queue gives a message its id on delivery, not at send.
        return {};
      });
    },
  };
}
