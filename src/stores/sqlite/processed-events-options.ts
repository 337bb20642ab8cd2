/** The options shared by the SQLite entry's `markProcessed`, `migrateProcessedEvents` and `purgeProcessed`. */
import { checkOptionsObject } from '../../base/option-checks.js';
import { PROCESSED_EVENTS_TABLE } from './schema.js';
import { sqliteTableName, type SqliteTableName } from './table-name.js';

/** Where the SQLite entry's `markProcessed`, `migrateProcessedEvents` and `purgeProcessed` keep the processed events. */
export interface SqliteProcessedEventsOptions {
  /**
   * The processed-events table: lower-case letters, digits and underscores.
   * @default 'svc_webhooks_processed_events'
   */
  readonly table?: string;
}

/** The table the options name; throws `WebhookOptionsError` for bad options. */
export function processedEventsTable(options: SqliteProcessedEventsOptions | undefined): SqliteTableName {
  checkOptionsObject('processed events', options);
  return sqliteTableName('table', options?.table, PROCESSED_EVENTS_TABLE);
}
