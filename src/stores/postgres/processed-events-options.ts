/** The options shared by `markProcessed`, `migrateProcessedEvents` and `purgeProcessed`. */
import { tableName, type TableName } from './table-name.js';
import { PROCESSED_EVENTS_TABLE } from './schema.js';
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
