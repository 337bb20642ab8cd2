/**
 * Exactly once, when the side effect is a database write: the delivery's dedup key is
 * recorded in the caller's own transaction, so the record commits or rolls
 * back with the caller's writes.
 */
import type { PostgresConnection } from './connection.js';
import { checkKeyToMark, recordIdStatement, runInTransaction, transactionRunner } from './in-transaction.js';
import { processedEventsTable, type ProcessedEventsOptions } from './processed-events-options.js';

/**
 * Records `key` (a delivery's `dedupKey`) as processed, inside the caller's open transaction on
 * `db`. Resolves to true the first time, false if the event was processed
 * before: then skip the side effect.
 *
 * `INSERT … ON CONFLICT DO NOTHING` on the table's primary key: if another
 * open transaction inserted the same id, this one waits for it, then answers
 * false if it committed and true if it rolled back. (Under REPEATABLE READ or
 * SERIALIZABLE the waiting transaction fails with a serialization error
 * instead; its retry answers false.)
 *
 * `db` is the transaction's connection: a pg `Client` or `PoolClient` after
 * `BEGIN`, the `sql` that postgres.js' `sql.begin()` hands its callback, or a
 * function running a statement in the transaction. Throws `WebhookOptionsError` for a
 * pool or a postgres.js top-level `sql`, whose statements would run outside
 * the transaction, for an empty id, or for bad options. Rejects with a
 * `WebhookOptionsError`, recording nothing, when the statements run outside a
 * transaction all the same (a client without `BEGIN`, a function over a pool).
 */
export function markProcessed(db: PostgresConnection, key: string, options?: ProcessedEventsOptions): Promise<boolean> {
  const run = transactionRunner(db, 'markProcessed');
  checkKeyToMark(key);
  const table = processedEventsTable(options);
  return runInTransaction(run, 'markProcessed', [table], recordIdStatement(table), [key]).then((rows) => rows.length === 1);
}
