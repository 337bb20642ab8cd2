/** Creating the processed-events table from the application, idempotently and safely from several processes at once. */
import { sqliteDatabase, type SqliteDatabase } from './database.js';
import { processedEventsTable, type SqliteProcessedEventsOptions } from './processed-events-options.js';
import { applySchema, processedEventsSchema } from './schema.js';

/**
 * Creates the processed-events table of `markProcessed` and its index unless
 * they exist. Throws `WebhookOptionsError` for a `db` that is neither driver or for bad options.
 */
export function migrateProcessedEvents(db: SqliteDatabase, options?: SqliteProcessedEventsOptions): void {
  const database = sqliteDatabase(db, 'migrateProcessedEvents');
  applySchema(database, processedEventsSchema(processedEventsTable(options)));
}
