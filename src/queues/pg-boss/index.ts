/**
 * svc-webhooks/pg-boss: slow work in a Postgres queue, each event processed
 * on the other side. `enqueue(boss, queue, { pool })` is a `handoff` for
 * every entry: it records the event's key and sends its job in one
 * transaction, then the entry answers 202. `work(boss, queue, { on })` runs
 * the typed handlers of `on` for each job. Works with pg-boss 10, 11 and 12,
 * and imports nothing of pg-boss: the caller hands in its own instance.
 * @packageDocumentation
 */
export { enqueue, type PgBossEnqueueOptions } from './enqueue.js';
export type { PgBossDb, PgBossInstance, PgBossJob, PgBossSendOptions, PgBossWorkOptions } from './pg-boss-types.js';
export type { PgPool, PgPoolClient } from './transaction.js';
export { work, type PgBossWorkerOptions } from './work.js';
