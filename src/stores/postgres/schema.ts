/**
 * The tables, as SQL: the one source of `migrateProcessedEvents()`, `PostgresDedupStore#migrate()`
 * and the shipped `sql/svc-webhooks-postgres.sql`. Each is created only if absent.
 */
import type { TableName } from './table-name.js';

/** The default table of `markProcessed`. */
export const PROCESSED_EVENTS_TABLE = 'svc_webhooks_processed_events';
/** The default table of `markProcessedInOrder`'s versions. */
export const PROCESSED_VERSIONS_TABLE = 'svc_webhooks_processed_versions';
/** The default table of `PostgresDedupStore`. */
export const DEDUP_TABLE = 'svc_webhooks_dedup';
/** What the default table of `PostgresDedupStore`'s objects appends to the store's table name. */
export const ORDER_TABLE_SUFFIX = '_order';

/**
 * One row per processed delivery (its dedup key), stamped with the start of the transaction
 * that recorded it; the index serves the retention clean-up.
 */
export function processedEventsSchema(table: TableName): string[] {
  return [
    `CREATE TABLE IF NOT EXISTS ${table.sql} (\n  id text PRIMARY KEY,\n  processed_at timestamptz NOT NULL DEFAULT now()\n)`,
    `CREATE INDEX IF NOT EXISTS ${table.index('processed_at')} ON ${table.sql} (processed_at)`,
  ];
}

/**
 * One row per object of ordered events (its key, scoped as dedup keys are): the highest version
 * processed, stamped as the object's row was last raised.
 */
export function processedVersionsSchema(table: TableName): string[] {
  return [`CREATE TABLE IF NOT EXISTS ${table.sql} (\n  key text PRIMARY KEY,\n  version double precision NOT NULL,\n  processed_at timestamptz NOT NULL DEFAULT now()\n)`];
}

/**
 * One row per claimed id: `token` holds the lease's token, or NULL once the
 * event is done; `expires_at` is when the lease ends or the done id is
 * forgotten. A row past `expires_at` counts as absent.
 */
export function dedupSchema(table: TableName): string[] {
  return [
    `CREATE TABLE IF NOT EXISTS ${table.sql} (\n  id text PRIMARY KEY,\n  token text,\n  expires_at timestamptz NOT NULL\n)`,
    `CREATE INDEX IF NOT EXISTS ${table.index('expires_at')} ON ${table.sql} (expires_at)`,
  ];
}

/**
 * One row per object of ordered events: the highest version processed, until
 * `version_expires_at`, and the lease of the event of it that runs, under
 * `token` until `lease_expires_at`. A row with neither live counts as absent.
 */
export function dedupOrderSchema(table: TableName): string[] {
  return [
    `CREATE TABLE IF NOT EXISTS ${table.sql} (\n  key text PRIMARY KEY,\n  version double precision,\n  version_expires_at timestamptz,\n` +
      '  token text,\n  lease_expires_at timestamptz\n)',
  ];
}
