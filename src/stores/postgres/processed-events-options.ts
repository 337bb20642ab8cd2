/** The options shared by `markProcessed`, `markProcessedInOrder`, `migrateProcessedEvents` and `purgeProcessed`. */
import { tableName, type TableName } from './table-name.js';
import { PROCESSED_EVENTS_TABLE, PROCESSED_VERSIONS_TABLE } from './schema.js';
import { WebhookOptionsError } from '../../base/options-error.js';

/** Where `markProcessed`, `migrateProcessedEvents`, `purgeProcessed` and pg-boss's `enqueue` keep the processed events. */
export interface ProcessedEventsOptions {
  /**
   * The processed-events table: `table` or `schema.table`, lower case.
   * @default 'svc_webhooks_processed_events'
   */
  readonly table?: string;
}

/** The table the options name; throws `WebhookOptionsError` for bad options. */
export function processedEventsTable(options: ProcessedEventsOptions | undefined): TableName {
  if (options !== undefined && (options === null || typeof options !== 'object')) {
    throw new WebhookOptionsError('svc-webhooks: options must be an object');
  }
  return tableName('table', options?.table, PROCESSED_EVENTS_TABLE);
}

/** Where `markProcessedInOrder` and `migrateProcessedEvents` keep the processed events and the versions of their objects. */
export interface ProcessedVersionsOptions extends ProcessedEventsOptions {
  /**
   * The table of the highest version processed of each object: `table` or
   * `schema.table`, lower case.
   * @default 'svc_webhooks_processed_versions'
   */
  readonly versionsTable?: string;
}

/** The processed-events table and the versions table the options name; throws `WebhookOptionsError` for bad options. */
export function processedVersionsTables(options: ProcessedVersionsOptions | undefined): { events: TableName; versions: TableName } {
  const events = processedEventsTable(options);
  const versions = tableName('versionsTable', options?.versionsTable, PROCESSED_VERSIONS_TABLE);
  if (versions.sql === events.sql) throw new WebhookOptionsError('svc-webhooks: versionsTable must be another table than table');
  return { events, versions };
}
