/**
 * svc-webhooks/cloudflare: slow work on Cloudflare Queues, each event
 * processed once, without a server of your own. `enqueue(env.QUEUE)` is the
 * Fetch and Hono entries' `handoff`: it sends one message per delivery, and
 * the receiver answers 202 once the queue holds it. `work({ on, dedup })`
 * is a consumer Worker's `queue` handler: it runs the typed handlers of
 * each message under a lease on its event in a dedup store (a
 * `D1DedupStore` of `svc-webhooks/d1`, made from the Worker's `env`), so
 * that a message delivered twice runs its handler once, and, with
 * `ordering`, the events of one object one at a time, an older one after
 * a newer skipped as stale. Loads on workerd without `nodejs_compat`, and imports nothing of
 * Cloudflare's.
 * @packageDocumentation
 */
export { enqueue, type CloudflareEnqueueOptions } from './enqueue.js';
export type { QueueBatch, QueueMessage, QueueProducer, QueueSendOptions } from './queue-types.js';
export { work, type CloudflareQueueHandler, type CloudflareWorkerDedupOptions, type CloudflareWorkerOptions } from './work.js';
