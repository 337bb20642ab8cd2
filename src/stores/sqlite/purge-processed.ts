/** The retention clean-up of the SQLite processed-events table. */
import { purgeAge } from '../retry-window.js';
import { sqliteDatabase, type SqliteDatabase } from './database.js';
import { processedEventsTable, type SqliteProcessedEventsOptions } from './processed-events-options.js';
import { NOW_MS } from './schema.js';

/** Options of the SQLite entry's `purgeProcessed()`. */
export interface SqlitePurgeProcessedOptions extends SqliteProcessedEventsOptions {
  /**
   * Ids recorded longer ago than this, in milliseconds, are deleted. At least
   * three days (the service's retry window): a retry of a forgotten event
   * would be processed again.
   * @default 345600000 (four days)
   */
  readonly olderThanMs?: number;
}

/**
 * Deletes the ids recorded more than `olderThanMs` ago, in one statement;
 * answers how many. Run it from a scheduled job. Throws `WebhookOptionsError`
 * for bad options, an age under three days among them.
 */
export function purgeProcessed(db: SqliteDatabase, options?: SqlitePurgeProcessedOptions): number {
  const database = sqliteDatabase(db, 'purgeProcessed');
  const table = processedEventsTable(options);
  const olderThanMs = purgeAge(options?.olderThanMs);
  return Number(database.prepare(`DELETE FROM ${table.sql} WHERE processed_at < ${NOW_MS} - ?`).run(olderThanMs).changes);
}
