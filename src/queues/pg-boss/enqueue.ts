/**
 * The receiving side: a `Handoff` that records the delivery's dedup key in
 * the processed-events table of `markProcessed` and sends its job to
 * pg-boss in one Postgres transaction. The queue and the record commit
 * together, so no job exists without its record and no record without its
 * job: a retry of a queued delivery finds the record and is answered as a
 * duplicate for as long as the record is kept.
 */
import { checkDuration, checkOptionsObject, MAX_TIMER_MS } from '../../base/option-checks.js';
import type { WebhookDelivery } from '../../core/delivery.js';
import type { Handoff } from '../../process/handoff.js';
import { markProcessed } from '../../stores/postgres/mark-processed.js';
import { processedEventsTable, type ProcessedEventsOptions } from '../../stores/postgres/processed-events-options.js';
import type { PgBossInstance, PgBossSendOptions } from './pg-boss-types.js';
import { queueDelivery, type Sent } from '../queue-traces.js';
import { inTransaction, type PgPool, type TransactionOutcome } from './transaction.js';
import { WebhookOptionsError } from '../../base/options-error.js';

/** Options of `enqueue()`. */
export interface PgBossEnqueueOptions {
  /**
   * A pg `Pool` on the database pg-boss keeps its jobs in: each event's
   * transaction takes a client of it. pg-boss offers no transaction of its
   * own, so the pool is the caller's.
   */
  readonly pool: PgPool;
  /**
   * The processed-events table the event keys are recorded in (`table` or
   * `schema.table`, lower case), created by `migrateProcessedEvents()` of svc-webhooks/postgres.
   * Keep its rows at least three days (`purgeProcessed`): a retry of an event
   * whose record is gone is queued again.
   * @default 'svc_webhooks_processed_events'
   */
  readonly table?: string;
  /**
   * pg-boss's options for every job (`retryLimit`, `retryDelay`,
   * `retryBackoff`, `expireInSeconds`, `priority`, `startAfter`,
   * `retentionSeconds`). Set `expireInSeconds` above the longest handler's
   * run: pg-boss fails, and retries, a job still active after it. Set a
   * dead letter queue on the queue (`createQueue`), where pg-boss 10, 11
   * and 12 all take it.
   * @default {} (the queue's and pg-boss's defaults)
   */
  readonly job?: PgBossSendOptions;
  /**
   * How long, in milliseconds, the receiver waits for the transaction (a
   * client of the pool, the record, the send and the commit) before it
   * answers 503 `handoff_failed` and releases the delivery's claim: an
   * exhausted pool, or a Postgres that stopped answering, would otherwise
   * hold the answer past the sender's 10 s. Once it has passed, COMMIT is
   * never sent and the client is destroyed rather than given back, so
   * Postgres rolls back what the transaction did: the retry queues the
   * event. Only a COMMIT sent before the deadline and answered after it may
   * commit; the retry then finds the key recorded and is answered as a
   * duplicate (200), its job queued once. Give the pool a
   * `connectionTimeoutMillis` as well: pg waits for a new connection
   * without a bound, and a connection that never opens keeps its place in
   * the pool.
   * @default 2000
   */
  readonly timeoutMs?: number;
}

/**
 * A `Handoff` for every entry's `handoff` option: each verified delivery
 * becomes one job in pg-boss's queue `queueName`, its data a
 * `QueuedDelivery`. In one transaction on a client of `options.pool`, the
 * delivery's `dedupKey` is recorded with `markProcessed` and the job sent; the entry answers 202 once that
 * committed. A key recorded before is answered as a duplicate (200) and no
 * job is sent; a failure, or a transaction not ended within `timeoutMs`,
 * rolls both back and is answered 503 with `Retry-After`. The queue must exist (`boss.createQueue`) and be of the
 * `standard` policy: a job pg-boss refuses to create fails the delivery.
 * Throws `WebhookOptionsError` for bad arguments.
 */
export function enqueue(boss: PgBossInstance, queueName: string, options: PgBossEnqueueOptions): Handoff {
  if (typeof (boss as Partial<PgBossInstance> | null)?.send !== 'function') {
    throw new WebhookOptionsError('svc-webhooks: enqueue needs a pg-boss instance (new PgBoss(...)) as its first argument');
  }
  if (typeof queueName !== 'string' || queueName === '') throw new WebhookOptionsError('svc-webhooks: enqueue needs the name of a pg-boss queue');
  if (options === undefined) throw new WebhookOptionsError('svc-webhooks: enqueue needs options with pool, a pg Pool on the database of pg-boss');
  checkOptionsObject('enqueue', options);
  const { pool, job = {}, timeoutMs = 2_000 } = options;
  if (typeof (pool as Partial<PgPool> | null)?.connect !== 'function') {
    throw new WebhookOptionsError('svc-webhooks: enqueue needs pool, a pg Pool on the database of pg-boss');
  }
  if (typeof job !== 'object' || job === null) throw new WebhookOptionsError('svc-webhooks: enqueue options.job must be an object');
  const tableOptions: ProcessedEventsOptions = options.table === undefined ? {} : { table: options.table };
  // Checked here, so that a bad name throws at creation rather than fail every delivery.
  processedEventsTable(tableOptions);
  checkDuration('timeoutMs', timeoutMs, MAX_TIMER_MS);
  const jobOptions: PgBossSendOptions = { ...job };

  return {
    hand(delivery: WebhookDelivery) {
      return queueDelivery('pg-boss', queueName, delivery, (data) =>
        inTransaction(pool, async (client): Promise<TransactionOutcome<Sent>> => {
          const first = await markProcessed(client, delivery.dedupKey, tableOptions);
          if (!first) return { commit: false, value: 'duplicate' };
          const db = { executeSql: (text: string, values: unknown[]) => client.query(text, values) };
          const jobId = await boss.send(queueName, data, { ...jobOptions, db });
          // pg-boss answers null, rather than failing, for a job a singleton policy refused, and pg-boss 10 for a queue that does not exist.
          if (jobId === null) {
            throw new Error(`svc-webhooks: pg-boss created no job in the queue ${JSON.stringify(queueName)}: does it exist, with the standard policy?`);
          }
          return { commit: true, value: { jobId } };
        }, timeoutMs),
      );
    },
  };
}
