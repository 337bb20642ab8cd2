/**
 * Exactly once, when the side effect is a database write: the delivery's dedup key is
 * recorded in the caller's own transaction, so the record commits or rolls
 * back with the caller's writes.
 */
import { errorChain } from '../error-chain.js';
import { isPool, statementRunner, type PostgresConnection } from './connection.js';
import { processedEventsTable, type ProcessedEventsOptions } from './processed-events-options.js';
import { WebhookOptionsError } from '../../base/options-error.js';

/** SQLSTATE no_active_sql_transaction: what LOCK TABLE answers outside a transaction block. */
const NO_ACTIVE_TRANSACTION = '25P01';

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
  const run = statementRunner(db, 'markProcessed');
  if (isPool(db)) {
    throw new WebhookOptionsError(
      "svc-webhooks: markProcessed runs in the caller's transaction: pass the transaction's client " +
        '(pg: the client of pool.connect() after BEGIN; postgres.js: the sql that sql.begin() hands you), not a pool',
    );
  }
  if (typeof key !== 'string' || key === '') throw new WebhookOptionsError('svc-webhooks: the key to mark must be a non-empty string');
  const table = processedEventsTable(options);
  // Outside a transaction the INSERT would commit on its own: should the side effect then fail, its retry
  // would be skipped as a duplicate and the event lost. LOCK TABLE fails there (and only there) before
  // anything is written; inside, it takes the lock the INSERT takes anyway. No single statement can tell:
  // over the extended protocol even transaction_timestamp() differs from statement_timestamp() outside one.
  return run(`LOCK TABLE ONLY ${table.sql} IN ROW EXCLUSIVE MODE`, []).then(
    () => run(`INSERT INTO ${table.sql} (id) VALUES ($1) ON CONFLICT (id) DO NOTHING RETURNING true AS inserted`, [key]),
    (error: unknown) => {
      if (!errorChain(error).some((link) => (link as { code?: unknown }).code === NO_ACTIVE_TRANSACTION)) throw error;
      throw new WebhookOptionsError(
        'svc-webhooks: markProcessed ran outside a transaction (its connection had no BEGIN), where the record would ' +
          'commit alone and a retry after a failed side effect would be skipped: call markProcessed inside the ' +
          'transaction that does the side effect, on its connection',
        { cause: error },
      );
    },
  ).then((rows) => rows.length === 1);
}
