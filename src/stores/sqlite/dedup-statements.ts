/**
 * The SQL of a lease store's operations on its table, for SQLite and D1
 * alike (D1 is SQLite): each claim is one statement, so it is atomic on
 * either. Parameters are `?` placeholders, bound in the order each comment gives.
 */

/** The row of a live lease held by a token: the id, the token and now are its parameters, in order. */
const HELD = 'id = ? AND token = ? AND expires_at > ?';

/** The SQL of each operation on `table` (quoted); a store prepares a statement from it when first used. */
export function dedupStatements(table: string) {
  return {
    // Takes the row only if it is absent or expired; RETURNING answers a row only when it did.
    // Parameters: id, token, lease end, now.
    claim:
      `INSERT INTO ${table} (id, token, expires_at) VALUES (?, ?, ?) ` +
      'ON CONFLICT (id) DO UPDATE SET token = excluded.token, expires_at = excluded.expires_at WHERE expires_at <= ? ' +
      'RETURNING token',
    // Parameters: id.
    holder: `SELECT token FROM ${table} WHERE id = ?`,
    // Parameters: retention end, then those of HELD.
    complete: `UPDATE ${table} SET token = NULL, expires_at = ? WHERE ${HELD}`,
    // Parameters: lease end, then those of HELD.
    renew: `UPDATE ${table} SET expires_at = ? WHERE ${HELD}`,
    // Parameters: those of HELD.
    release: `DELETE FROM ${table} WHERE ${HELD}`,
    // Parameters: now.
    deleteExpired: `DELETE FROM ${table} WHERE expires_at <= ?`,
  };
}

/** The name of one of a lease store's operations. */
export type DedupOperation = keyof ReturnType<typeof dedupStatements>;
