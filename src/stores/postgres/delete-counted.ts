/** A DELETE whose deleted rows are counted, on any client the Postgres entry takes. */
import { hasErrorCode } from '../error-chain.js';
import type { RunStatement } from './connection.js';
import { WebhookOptionsError } from '../../base/options-error.js';

/**
 * Runs a DELETE and resolves to how many rows it deleted, counted in the
 * database: one small row back whatever the client, not every deleted row.
 * Rejects with `WebhookOptionsError` when the connection answers no count, rather
 * than resolving to `NaN`.
 */
export async function deleteCounted(run: RunStatement, deleteStatement: string, params: string[]): Promise<number> {
  const rows = await run(`WITH deleted AS (${deleteStatement} RETURNING 1) SELECT count(*)::int AS count FROM deleted`, params);
  const count = Number(rows[0]?.count);
  if (!Number.isSafeInteger(count) || count < 0) throw new WebhookOptionsError('svc-webhooks: the connection answered the DELETE with no count of the rows deleted');
  return count;
}

/** SQLSTATE undefined_table. */
const UNDEFINED_TABLE = '42P01';

/**
 * `deleteCounted` on a table that a migration of 1.0 did not create (the objects and versions of ordered
 * events): 0 where the table does not exist, which a user who never orders events never needs.
 */
export function deleteCountedIfTable(run: RunStatement, deleteStatement: string, params: string[]): Promise<number> {
  return deleteCounted(run, deleteStatement, params).catch((error: unknown) => {
    if (hasErrorCode(error, UNDEFINED_TABLE)) return 0;
    throw error;
  });
}
