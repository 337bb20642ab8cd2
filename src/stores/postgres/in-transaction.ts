/**
 * Statements that must run in the caller's own transaction, so that what they record commits or
 * rolls back with the caller's writes: `markProcessed` and `markProcessedInOrder`.
 */
import { WebhookOptionsError } from '../../base/options-error.js';
import { hasErrorCode } from '../error-chain.js';
import { isPool, statementRunner, type PostgresConnection, type RunStatement } from './connection.js';
import type { TableName } from './table-name.js';

/** SQLSTATE no_active_sql_transaction: what LOCK TABLE answers outside a transaction block. */
const NO_ACTIVE_TRANSACTION = '25P01';

/**
 * The runner of `user`'s statements on `db`. Throws `WebhookOptionsError` for a pool or a
 * postgres.js top-level `sql`, whose statements could run outside the transaction, and for what is no client.
 */
export function transactionRunner(db: PostgresConnection, user: string): RunStatement {
  const run = statementRunner(db, user);
  if (isPool(db)) {
    throw new WebhookOptionsError(
      `svc-webhooks: ${user} runs in the caller's transaction: pass the transaction's client ` +
        '(pg: the client of pool.connect() after BEGIN; postgres.js: the sql that sql.begin() hands you), not a pool',
    );
  }
  return run;
}

/**
 * Runs `statement` after making sure it runs in a transaction block; rejects with
 * `WebhookOptionsError`, nothing written, when it would not.
 *
 * Outside a transaction the statement would commit on its own: should the side effect then fail, its
 * retry would be skipped as a duplicate and the event lost. LOCK TABLE fails there (and only there)
 * before anything is written; inside, it takes the lock the statement's INSERTs take anyway. No single
 * statement can tell: over the extended protocol even transaction_timestamp() differs from
 * statement_timestamp() outside one.
 */
export function runInTransaction(
  run: RunStatement,
  user: string,
  tables: readonly TableName[],
  statement: string,
  params: string[],
): ReturnType<RunStatement> {
  return run(`LOCK TABLE ONLY ${tables.map((table) => table.sql).join(', ')} IN ROW EXCLUSIVE MODE`, []).then(
    () => run(statement, params),
    (error: unknown) => {
      if (!hasErrorCode(error, NO_ACTIVE_TRANSACTION)) throw error;
      throw new WebhookOptionsError(
        `svc-webhooks: ${user} ran outside a transaction (its connection had no BEGIN), where the record would ` +
          `commit alone and a retry after a failed side effect would be skipped: call ${user} inside the ` +
          'transaction that does the side effect, on its connection',
        { cause: error },
      );
    },
  );
}

/** The statement recording `$1` as a processed id in `table`: a row back the first time, none after. */
export function recordIdStatement(table: TableName): string {
  return `INSERT INTO ${table.sql} (id) VALUES ($1) ON CONFLICT (id) DO NOTHING RETURNING true AS inserted`;
}

/** Throws `WebhookOptionsError` unless `key`, a delivery's dedup key, is a non-empty string. */
export function checkKeyToMark(key: unknown): asserts key is string {
  if (typeof key !== 'string' || key === '') throw new WebhookOptionsError('svc-webhooks: the key to mark must be a non-empty string');
}
