/** The retention clean-up of the processed-events table. */
import { statementRunner, type PostgresConnection } from './connection.js';
import { deleteCounted } from './delete-counted.js';
import { processedEventsTable, type ProcessedEventsOptions } from './processed-events-options.js';
import { purgeAge } from '../retry-window.js';

/** Options of `purgeProcessed()`. */
export interface PurgeProcessedOptions extends ProcessedEventsOptions {
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
 * resolves to how many. Run it from a scheduled job. Throws `WebhookOptionsError` for
 * bad options, an age under three days among them.
 */
export function purgeProcessed(db: PostgresConnection, options?: PurgeProcessedOptions): Promise<number> {
  const run = statementRunner(db, 'purgeProcessed');
  const table = processedEventsTable(options);
  const olderThanMs = purgeAge(options?.olderThanMs);
  return deleteCounted(run, `DELETE FROM ${table.sql} WHERE processed_at < now() - $1::bigint * interval '1 millisecond'`, [
    String(olderThanMs),
  ]);
}
