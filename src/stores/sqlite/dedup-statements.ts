/**
 * The SQL of a lease store's operations on its table, for SQLite and D1
 * alike (D1 is SQLite): each claim is one statement, so it is atomic on
 * either. Parameters are `?` placeholders, bound in the order each comment gives.
 */

/** The row of a live lease held by a token: the id, the token and now are its parameters, in order. */
export const HELD = 'id = ? AND token = ? AND expires_at > ?';

/**
 * A claim of the row `values` gives (id, token, lease end: a `VALUES` list, or a `SELECT … WHERE` that
 * yields it only when a condition holds), taken only if the id is absent or expired: it changes one row
 * when it took, none otherwise. Parameters: those of `values`, then now.
 */
function takeFrom(table: string, values: string): string {
  return (
    `INSERT INTO ${table} (id, token, expires_at) ${values} ` +
    'ON CONFLICT (id) DO UPDATE SET token = excluded.token, expires_at = excluded.expires_at WHERE expires_at <= ?'
  );
}

/** The row a plain claim writes: id, token, lease end. */
export const CLAIM_VALUES = 'VALUES (?, ?, ?)';

/** As `takeFrom`, RETURNING a row only when it took. */
export function claimFrom(table: string, values: string): string {
  return `${takeFrom(table, values)} RETURNING token`;
}

/** The SQL of each operation on `table` (quoted); a store prepares a statement from it when first used. */
export function dedupStatements(table: string) {
  return {
    // Parameters: id, token, lease end, now. SQLite counts the rows it changed; RETURNING would cost the claim
    // a table of its answers (about a tenth of a claim and its completion).
    claim: takeFrom(table, CLAIM_VALUES),
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
