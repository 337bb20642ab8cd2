/**
 * The BullMQ worker of the ordering run, in a process of its own to be
 * SIGKILLed mid-run: `work` with `ordering` on a RedisDedupStore, its
 * handler writing the apply and the object's state (ordering-ledger.ts)
 * outside any transaction, as a handler that trusts the order does.
 * Configured by `ORDERING_SETTINGS` (JSON); prints `ready` once it runs.
 */
import * as bullmq from 'bullmq';
import { Redis } from 'ioredis';
import type { BullMQClasses } from '../../../src/queues/bullmq/index.js';
import { work } from '../../../src/queues/bullmq/index.js';
import { RedisDedupStore } from '../../../src/stores/redis/index.js';
import { connectionTo } from '../bullmq-majors.js';
import { pgPool } from '../postgres-clients.js';
import { orderOf } from './ordered-events.js';
import { recordApply, type LedgerTables } from './ordering-ledger.js';

const settings = JSON.parse(process.env.ORDERING_SETTINGS!) as {
  readonly url: string;
  readonly redisUrl: string;
  readonly queue: string;
  readonly keyPrefix: string;
  readonly leaseMs: number;
  readonly lockMs: number;
  readonly concurrency: number;
  readonly ledger: LedgerTables;
};
const pool = pgPool(settings.url, { max: 8 });
const client = new Redis(settings.redisUrl, { maxRetriesPerRequest: null, retryStrategy: () => 50 });
client.on('error', () => {});

const worker = await work(settings.queue, {
  bullmq: { Worker: bullmq.Worker, DelayedError: bullmq.DelayedError } as unknown as BullMQClasses,
  dedup: { store: new RedisDedupStore(client, { keyPrefix: settings.keyPrefix }), leaseMs: settings.leaseMs },
  ordering: { version: (event) => event.timestamp },
  onHandlerError: (error) => console.error(`ordered-bullmq-worker: handler failed: ${(error as Error).message}`),
  on: {
    'message.received': async (event) => {
      const { object, version } = orderOf(event);
      await recordApply(pool, settings.ledger, event.id, object, version);
    },
  },
  worker: {
    connection: { ...connectionTo(settings.redisUrl), retryStrategy: () => 50 },
    concurrency: settings.concurrency,
    lockDuration: settings.lockMs,
    stalledInterval: settings.lockMs,
    maxStalledCount: 1_000,
  },
});
worker.on('error', () => {});
await worker.waitUntilReady();
console.log('ready');
