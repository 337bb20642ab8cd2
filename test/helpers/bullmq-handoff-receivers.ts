/**
 * The receivers of the load and crash runs: Express, Hono and Fastify, each
 * with connections of its own to one Redis (a BullMQ queue for the handoff,
 * an ioredis client for its dedup store, unless each keeps its own in
 * memory), Hono's queue on BullMQ 5 and the others on BullMQ 6. Jobs get
 * many attempts: a handler that fails because a connection was killed is
 * retried, not left in the failed set.
 */
import { Redis } from 'ioredis';
import { enqueue } from '../../src/queues/bullmq/index.js';
import { MemoryDedupStore } from '../../src/index.js';
import type { BullMQJobOptions } from '../../src/queues/bullmq/index.js';
import { RedisDedupStore } from '../../src/stores/redis/index.js';
import { BULLMQ_MAJORS, type BullMQMajor } from './bullmq-majors.js';
import { HANDOFF_ENTRIES, type HandoffEntry } from './bullmq-receivers.js';
import { now, SECRET } from './signed-request.js';

/** Where the receivers' own dedup keys go, apart from the workers'. */
export const RECEIVER_PREFIX = 'receivers:';

const [bullmq6, bullmq5] = BULLMQ_MAJORS as [BullMQMajor, BullMQMajor];
const RECEIVERS: ReadonlyArray<[HandoffEntry, BullMQMajor]> = [
  ['Express', bullmq6],
  ['Hono', bullmq5],
  ['Fastify', bullmq6],
];

export interface HandoffReceiversOptions {
  /**
   * Where the receivers record their claims: one Redis store they share, or
   * a memory store each, which remembers only its own receiver's
   * deliveries, so that copies sent to two receivers both reach the queue.
   */
  readonly dedup: 'redis' | 'memory';
  /** Over the many attempts each job gets. */
  readonly job?: BullMQJobOptions;
}

/** Starts the receivers; answers their webhook URLs. `closeAtEnd` gets what to close. */
export async function startHandoffReceivers(
  redisUrl: string,
  queueName: string,
  options: HandoffReceiversOptions,
  closeAtEnd: (close: () => unknown) => void,
): Promise<string[]> {
  const urls: string[] = [];
  for (const [entry, major] of RECEIVERS) {
    // Reconnect at once after a kill; a command meanwhile waits, and enqueue's timeout answers 503 for it.
    const queue = major.queue(queueName, redisUrl, { retryStrategy: () => 50 });
    queue.on('error', () => {});
    closeAtEnd(() => queue.close());
    const handoff = enqueue(queue, { job: { attempts: 1_000, backoff: { type: 'fixed', delay: 500 }, ...options.job } });
    const dedup = options.dedup === 'memory' ? new MemoryDedupStore({ now }) : redisStore(redisUrl, closeAtEnd);
    const app = await HANDOFF_ENTRIES[entry]({ secret: SECRET, now, dedup: { store: dedup }, handoff });
    closeAtEnd(() => app.close());
    urls.push(`${app.url}/webhooks`);
  }
  return urls;
}

function redisStore(redisUrl: string, closeAtEnd: (close: () => unknown) => void): RedisDedupStore {
  const client = new Redis(redisUrl, { retryStrategy: () => 50 });
  client.on('error', () => {});
  closeAtEnd(() => client.disconnect());
  return new RedisDedupStore(client, { keyPrefix: RECEIVER_PREFIX });
}
