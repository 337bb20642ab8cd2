/**
 * svc-webhooks/postgres: process each event exactly once when its side
 * effect is a database write. `markProcessed` records a delivery's `dedupKey` in the
 * application's own transaction, so the record and the write commit or roll
 * back together, and `markProcessedInOrder` the object's version with it, for
 * events that must apply in order; `PostgresDedupStore` is a lease store for
 * the adapters' `dedup` option, which orders events too;
 * `migrateProcessedEvents` and `purgeProcessed` look after the tables. Works
 * with pg, postgres.js, or any client through a `(text, params)` function,
 * and imports none of them.
 * @packageDocumentation
 */
export type { PgQueryable, PostgresConnection, PostgresJsSql, PostgresQueryFunction } from './connection.js';
export { markProcessed } from './mark-processed.js';
export { markProcessedInOrder, type MarkInOrderResult } from './mark-processed-in-order.js';
export { migrateProcessedEvents } from './migrate.js';
export { PostgresDedupStore, type PostgresDedupStoreOptions } from './postgres-dedup-store.js';
export type { ProcessedEventsOptions, ProcessedVersionsOptions } from './processed-events-options.js';
export { purgeProcessed, type PurgeProcessedOptions } from './purge-processed.js';
