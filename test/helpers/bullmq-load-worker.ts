/**
 * One worker process of the load run, started (and SIGKILLed) by
 * `WorkerFleet`: a `work` on the run's queue, its handlers slow
 * (`HANDLER_MS`, the 15 s) and then doing two side effects in
 * Postgres, both counted per execution: one outside any transaction
 * (`executions`, with the process id: what a worker killed after it and
 * before `complete` does twice), and one in the handler's own transaction with `markProcessed`
 * (`effects`, which no crash can double). Configured by environment
 * variables; prints `ready` once the worker runs.
 */
import * as bullmq6 from 'bullmq';
import * as bullmq5 from 'bullmq5';
import { Redis } from 'ioredis';
import pg from 'pg';
import type { BullMQClasses } from '../../src/queues/bullmq/index.js';
import { work } from '../../src/queues/bullmq/index.js';
import { markProcessed } from '../../src/stores/postgres/index.js';
import { RedisDedupStore } from '../../src/stores/redis/index.js';
import { pgTransactions } from './load/pg-transactions.js';

const env = (name: string): string => {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`load-worker needs ${name}`);
  return value;
};
const redisUrl = env('REDIS_URL');
const tables = { effects: env('EFFECTS_TABLE'), executions: env('EXECUTIONS_TABLE'), processed: env('PROCESSED_TABLE') };
const handlerMs = Number(env('HANDLER_MS'));
const module = env('BULLMQ_MAJOR') === '5' ? bullmq5 : bullmq6;

const pool = new pg.Pool({ connectionString: env('DATABASE_URL'), max: 20, application_name: env('APPLICATION_NAME') });
pool.on('error', () => {});
const transactions = pgTransactions(pool);
const client = new Redis(redisUrl, { maxRetriesPerRequest: null, retryStrategy: () => 50 });
client.on('error', () => {});
const { hostname, port } = new URL(redisUrl);

const worker = await work(env('QUEUE'), {
  bullmq: { Worker: module.Worker, DelayedError: module.DelayedError } as unknown as BullMQClasses,
  dedup: { store: new RedisDedupStore(client, { keyPrefix: env('DEDUP_PREFIX') }), leaseMs: Number(env('LEASE_MS')), onError: () => {} },
  onHandlerError: (error) => console.error(`load-worker: handler failed: ${(error as Error).message}`),
  on: {
    'message.received': async (event, { dedupKey }) => {
      await new Promise((resolve) => setTimeout(resolve, handlerMs));
      await pool.query(`INSERT INTO ${tables.executions} (id, pid) VALUES ($1, $2)`, [event.id, process.pid]);
      await transactions.run(async (tx) => {
        if (!(await markProcessed(tx.db, dedupKey, { table: tables.processed }))) return 'duplicate';
        await tx.query(`INSERT INTO ${tables.effects} (id) VALUES ($1)`, [event.id]);
        return 'processed';
      });
    },
  },
  worker: {
    connection: { host: hostname, port: Number(port), retryStrategy: () => 50 },
    concurrency: Number(env('CONCURRENCY')),
    lockDuration: Number(env('LOCK_MS')),
    stalledInterval: Number(env('LOCK_MS')),
    // Kills stall jobs again and again: past this count BullMQ would fail them, which the run counts as lost.
    maxStalledCount: 1_000,
  },
});
worker.on('error', () => {});
await worker.waitUntilReady();
console.log('ready');
