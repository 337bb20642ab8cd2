/**
 * svc-webhooks/sqlite: exactly once on one machine, in a SQLite file that
 * survives a restart. `SqliteDedupStore` is a lease store for the entries'
 * `dedup` option, shared by every process that opens the file, and orders
 * the events of one object for the `ordering` option;
 * `markProcessed` records a delivery's `dedupKey` in the application's own
 * SQLite transaction, so the record and the write commit or roll back
 * together; `migrateProcessedEvents` and `purgeProcessed` look after its
 * table. Works with node:sqlite (Node 22.5 and later) and better-sqlite3, and
 * imports neither.
 * @packageDocumentation
 */
export type { SqliteDatabase, SqliteStatement, SqliteValue } from './database.js';
export { markProcessed } from './mark-processed.js';
export { migrateProcessedEvents } from './migrate.js';
export type { SqliteProcessedEventsOptions } from './processed-events-options.js';
export { purgeProcessed, type SqlitePurgeProcessedOptions } from './purge-processed.js';
export { SqliteDedupStore, type SqliteDedupStoreOptions } from './sqlite-dedup-store.js';
