/**
 * The receiving Worker of the Cloudflare tests: the Fetch entry, its
 * handoff `enqueue` on the producer binding, its store a D1DedupStore
 * (table `received`) unless `RECEIVER_DEDUP` is `none`, when every copy of
 * an event is queued and the consumer alone keeps it once.
 */
import { verifyWebhook } from '../../../adapters/fetch.js';
import { enqueue, type QueueProducer } from '../../../src/queues/cloudflare/index.js';
import { D1DedupStore, type D1Database } from '../../../src/stores/d1/index.js';

interface Env {
  readonly DB: D1Database;
  readonly WEBHOOKS: QueueProducer;
  readonly WEBHOOK_SECRET: string;
  readonly RECEIVER_DEDUP: 'd1' | 'none';
}

export default {
  fetch(request: Request, env: Env, ctx: unknown): Promise<Response> {
    const dedup = env.RECEIVER_DEDUP === 'none' ? false : { store: new D1DedupStore(env.DB, { table: 'received' }) };
    return verifyWebhook({ secret: env.WEBHOOK_SECRET, dedup, handoff: enqueue(env.WEBHOOKS, { queueName: 'webhooks' }) })(request, env, ctx);
  },
};
