/**
 * The two tables, as SQL for SQLite: what `migrateProcessedEvents()` and
 * `SqliteDedupStore.migrate()` create, each only if absent. Times are whole
 * milliseconds since the Unix epoch.
 */
import type { SqliteDatabase } from './database.js';
import type { SqliteTableName } from './table-name.js';

/** The default table of `markProcessed`. */
export const PROCESSED_EVENTS_TABLE = 'svc_webhooks_processed_events';
/** The default table of `SqliteDedupStore`. */
export const DEDUP_TABLE = 'svc_webhooks_dedup';

/** The database's clock in milliseconds since the epoch, as SQL: julianday() is in every SQLite, unixepoch('subsec') only from 3.42. */
export const NOW_MS = "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)";

/**
 * One row per processed delivery (its dedup key), stamped when recorded;
 * the index serves the retention clean-up.
 */
export function processedEventsSchema(table: SqliteTableName): string[] {
  return [
    `CREATE TABLE IF NOT EXISTS ${table.sql} (\n  id TEXT PRIMARY KEY NOT NULL,\n  processed_at INTEGER NOT NULL DEFAULT (${NOW_MS})\n) WITHOUT ROWID`,
    `CREATE INDEX IF NOT EXISTS ${table.index('processed_at')} ON ${table.sql} (processed_at)`,
  ];
}

/**
 * One row per claimed id: `token` holds the lease's token, or NULL once the
 * event is done; `expires_at` is when the lease ends or the done id is
 * forgotten. A row past `expires_at` counts as absent.
 */
export function dedupSchema(table: SqliteTableName): string[] {
  return [
    `CREATE TABLE IF NOT EXISTS ${table.sql} (\n  id TEXT PRIMARY KEY NOT NULL,\n  token TEXT,\n  expires_at INTEGER NOT NULL\n) WITHOUT ROWID`,
    `CREATE INDEX IF NOT EXISTS ${table.index('expires_at')} ON ${table.sql} (expires_at)`,
  ];
}

/**
 * Runs the statements of a schema. Each creates only what is absent, so
 * several processes may run them at once on one file: SQLite takes their
 * writes in turn, and each finds what another created.
 */
export function applySchema(db: SqliteDatabase, statements: readonly string[]): void {
  db.exec(statements.map((statement) => `${statement};`).join('\n'));
}
