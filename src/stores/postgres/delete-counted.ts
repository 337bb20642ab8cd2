import type { RunStatement } from './connection.js';

/**
 * Runs a DELETE and resolves to how many rows it deleted, counted in the
 * database: one small row back whatever the client, not every deleted row.
 */
export async function deleteCounted(run: RunStatement, deleteStatement: string, params: string[]): Promise<number> {
  const rows = await run(`WITH deleted AS (${deleteStatement} RETURNING 1) SELECT count(*)::int AS count FROM deleted`, params);
  return Number(rows[0]?.count);
}
