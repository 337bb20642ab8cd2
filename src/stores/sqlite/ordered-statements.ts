/**
 * The SQL of `SqliteDedupStore`'s ordered operations: the table of the
 * objects of ordered events and the statements on it. An ordered operation
 * runs them beside the store's plain statements in one transaction. Times
 * are whole milliseconds since the Unix epoch, from the store's clock.
 */
import type { SqliteTableName } from './table-name.js';

/** What the default objects table appends to the store's table name. */
export const ORDER_TABLE_SUFFIX = '_order';

/**
 * The objects table beside `table` (a name `sqliteTableName` checked): SQLite keeps a name of any
 * length, so the suffix may take it past the length allowed for a name given.
 */
export function orderTableBeside(table: string): SqliteTableName {
  const name = `${table}${ORDER_TABLE_SUFFIX}`;
  return { sql: `"${name}"`, index: (column) => `"${name}_${column}_idx"` };
}

/**
 * One row per object of ordered events: the highest version processed, until
 * `version_expires_at`, and the lease of the event of it that runs, under
 * `token` until `lease_expires_at`. A row with neither live counts as absent.
 */
export function dedupOrderSchema(table: SqliteTableName): string[] {
  return [
    `CREATE TABLE IF NOT EXISTS ${table.sql} (\n  key TEXT PRIMARY KEY NOT NULL,\n  version REAL,\n  version_expires_at INTEGER,\n` +
      '  token TEXT,\n  lease_expires_at INTEGER\n) WITHOUT ROWID',
  ];
}

/** A live version above the one given is recorded: the parameters are now, then the version. */
const HIGHER_VERSION = 'version IS NOT NULL AND version_expires_at > ? AND version > ?';

/** The recorded version stays: it is live and above the one completed; the parameter is now. */
const KEEP_VERSION = 'version IS NOT NULL AND version_expires_at > ? AND version > excluded.version';

/** The statements of the ordered operations on the store's `table` and its objects table, `orders`, with the parameters each takes, in order. */
export function orderedStatementsOn(table: string, orders: string) {
  return {
    /** id, now: the token of the event's live row, if any (NULL once done). */
    liveEvent: `SELECT token FROM ${table} WHERE id = ? AND expires_at > ?`,
    /** key, now: the token of a live lease on the object, if any. */
    objectHolder: `SELECT token FROM ${orders} WHERE key = ? AND token IS NOT NULL AND lease_expires_at > ?`,
    /** key, token, lease end, now, version: leases the object; answers whether a higher version was recorded. */
    leaseObject:
      `INSERT INTO ${orders} (key, token, lease_expires_at) VALUES (?, ?, ?) ` +
      'ON CONFLICT (key) DO UPDATE SET token = excluded.token, lease_expires_at = excluded.lease_expires_at ' +
      `RETURNING ${HIGHER_VERSION} AS stale`,
    /**
     * key, version, version end, now, now, token, token: records the version unless a higher live one
     * is (even where the object's lease ran out: the event is done), and drops the lease `token` holds.
     * SQLite reads the old row in every SET expression.
     */
    recordVersion:
      `INSERT INTO ${orders} (key, version, version_expires_at) VALUES (?, ?, ?) ` +
      'ON CONFLICT (key) DO UPDATE SET ' +
      `version = CASE WHEN ${KEEP_VERSION} THEN version ELSE excluded.version END, ` +
      `version_expires_at = CASE WHEN ${KEEP_VERSION} THEN version_expires_at ELSE excluded.version_expires_at END, ` +
      'token = CASE WHEN token = ? THEN NULL ELSE token END, ' +
      'lease_expires_at = CASE WHEN token = ? THEN NULL ELSE lease_expires_at END',
    /** key, token: drops the object's lease if `token` holds it. */
    dropObjectLease: `UPDATE ${orders} SET token = NULL, lease_expires_at = NULL WHERE key = ? AND token = ?`,
    /** lease end, key, token: moves the end of the object's lease if `token` holds it. */
    renewObjectLease: `UPDATE ${orders} SET lease_expires_at = ? WHERE key = ? AND token = ?`,
    /** now, now: deletes the objects with neither a live lease nor a live version. */
    deleteExpiredObjects:
      `DELETE FROM ${orders} WHERE NOT (token IS NOT NULL AND lease_expires_at > ?) ` +
      'AND NOT (version IS NOT NULL AND version_expires_at > ?)',
  };
}
