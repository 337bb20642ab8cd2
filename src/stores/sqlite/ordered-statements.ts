/**
 * The SQL of the ordered operations of `SqliteDedupStore` and
 * `D1DedupStore`: the table of the objects of ordered events and the
 * statements on it. The SQLite store runs its statements beside its plain
 * ones in one transaction, reading between them; D1 cannot read in the midst
 * of a step, so its statements run as one batch, each conditioned on what the
 * one before it did. Times are whole milliseconds since the Unix epoch, from
 * the store's clock.
 */
import { WebhookOptionsError } from '../../base/options-error.js';
import { claimFrom, HELD } from './dedup-statements.js';
import { DEDUP_TABLE } from './schema.js';
import { sqliteTableName, type SqliteTableName } from './table-name.js';

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
 * The objects table of a store whose `table` option is `table` and checked name `store`: the
 * `orderTable` option, or else `table` followed by `_order`. Throws `WebhookOptionsError` for a
 * bad name, or the store's own table.
 */
export function orderTableOption(table: string | undefined, orderTable: unknown, store: SqliteTableName): SqliteTableName {
  const orders = orderTable === undefined ? orderTableBeside(table ?? DEDUP_TABLE) : sqliteTableName('orderTable', orderTable, DEDUP_TABLE);
  if (orders.sql === store.sql) throw new WebhookOptionsError('svc-webhooks: orderTable must be another table than table');
  return orders;
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

/** Matched in the message of the error SQLite (and D1) gives for a table that does not exist. */
const NO_SUCH_TABLE = /no such table/;

/** Whether `error` says a table does not exist: a store migrated before it ordered lacks the objects table. */
export function isMissingTable(error: unknown): boolean {
  return error instanceof Error && NO_SUCH_TABLE.test(error.message);
}

/** A live version above the one given is recorded: the parameters are now, then the version. */
const HIGHER_VERSION = 'version IS NOT NULL AND version_expires_at > ? AND version > ?';

/** The recorded version stays: it is live and above the one completed; the parameter is now. */
const KEEP_VERSION = 'version IS NOT NULL AND version_expires_at > ? AND version > excluded.version';

/**
 * Leases the object of the row `values` gives (key, token, lease end), over any lease `onlyIf` allows
 * (a condition on the old row); answers whether a higher version was recorded. Parameters: those of
 * `values`, of `onlyIf`, then now, version.
 */
function leaseObjectFrom(orders: string, values: string, onlyIf = ''): string {
  return (
    `INSERT INTO ${orders} (key, token, lease_expires_at) ${values} ` +
    `ON CONFLICT (key) DO UPDATE SET token = excluded.token, lease_expires_at = excluded.lease_expires_at ${onlyIf}` +
    `RETURNING ${HIGHER_VERSION} AS stale`
  );
}

/**
 * Records the version of the row `values` gives (key, version, version end) unless a higher live one
 * is (even where the object's lease ran out: the event is done), and drops the lease `token` holds.
 * SQLite reads the old row in every SET expression. Parameters: those of `values`, then now, now,
 * token, token.
 */
function recordVersionFrom(orders: string, values: string): string {
  return (
    `INSERT INTO ${orders} (key, version, version_expires_at) ${values} ` +
    'ON CONFLICT (key) DO UPDATE SET ' +
    `version = CASE WHEN ${KEEP_VERSION} THEN version ELSE excluded.version END, ` +
    `version_expires_at = CASE WHEN ${KEEP_VERSION} THEN version_expires_at ELSE excluded.version_expires_at END, ` +
    'token = CASE WHEN token = ? THEN NULL ELSE token END, ' +
    'lease_expires_at = CASE WHEN token = ? THEN NULL ELSE lease_expires_at END'
  );
}

/** The statements both stores' ordered operations share, on the store's `table` and its objects table, `orders`. */
function sharedStatementsOn(table: string, orders: string) {
  return {
    /** id, now: the token of the event's live row, if any (NULL once done). */
    liveEvent: `SELECT token FROM ${table} WHERE id = ? AND expires_at > ?`,
    /** key, token: drops the object's lease if `token` holds it. */
    dropObjectLease: `UPDATE ${orders} SET token = NULL, lease_expires_at = NULL WHERE key = ? AND token = ?`,
    /** now, now: deletes the objects with neither a live lease nor a live version. */
    deleteExpiredObjects:
      `DELETE FROM ${orders} WHERE NOT (token IS NOT NULL AND lease_expires_at > ?) ` +
      'AND NOT (version IS NOT NULL AND version_expires_at > ?)',
  };
}

/** The statements of the SQLite store's ordered operations on its `table` and its objects table, `orders`, with the parameters each takes, in order. */
export function orderedStatementsOn(table: string, orders: string) {
  return {
    ...sharedStatementsOn(table, orders),
    /** key, now: the token of a live lease on the object, if any. */
    objectHolder: `SELECT token FROM ${orders} WHERE key = ? AND token IS NOT NULL AND lease_expires_at > ?`,
    /** key, token, lease end, now, version: leases the object; answers whether a higher version was recorded. */
    leaseObject: leaseObjectFrom(orders, 'VALUES (?, ?, ?)'),
    /** key, version, version end, now, now, token, token: records the version, and drops the lease `token` holds. */
    recordVersion: recordVersionFrom(orders, 'VALUES (?, ?, ?)'),
    /** lease end, key, token: moves the end of the object's lease if `token` holds it. */
    renewObjectLease: `UPDATE ${orders} SET lease_expires_at = ? WHERE key = ? AND token = ?`,
  };
}

/**
 * The statements of D1's ordered operations on the store's `table` and its objects table, `orders`,
 * with the parameters each takes, in order. A step runs as one batch, which D1 runs as one
 * transaction: where a statement depends on the one before, it checks in SQL what that one did.
 */
export function orderedBatchStatementsOn(table: string, orders: string) {
  const eventHeld = `EXISTS (SELECT 1 FROM ${table} WHERE ${HELD})`;
  return {
    ...sharedStatementsOn(table, orders),
    /**
     * key, token, lease end, id, now, now, now, version: leases the object unless the event is live
     * (running or done) or another live lease holds the object; answers, only when it leased, whether a
     * higher version was recorded. The one statement that decides a claim: two steps racing for one
     * object both write its row, and SQLite takes its writes in turn.
     */
    leaseFreeObject: leaseObjectFrom(
      orders,
      `SELECT ?, ?, ? WHERE NOT EXISTS (SELECT 1 FROM ${table} WHERE id = ? AND expires_at > ?)`,
      'WHERE token IS NULL OR lease_expires_at <= ? ',
    ),
    /** id, token, lease end, key, token, now: claims the event if `token` leased its object. */
    claimWithObject: claimFrom(table, `SELECT ?, ?, ? WHERE EXISTS (SELECT 1 FROM ${orders} WHERE key = ? AND token = ?)`),
    /** key, version, version end, then those of HELD, then now, now, token, token: records the version if `token` holds the event, as `recordVersion`. */
    recordVersionHeld: recordVersionFrom(orders, `SELECT ?, ?, ? WHERE ${eventHeld}`),
    /** lease end, key, token, then those of HELD: moves the end of the object's lease if `token` holds it and the event. */
    renewObjectLeaseHeld: `UPDATE ${orders} SET lease_expires_at = ? WHERE key = ? AND token = ? AND ${eventHeld}`,
  };
}
