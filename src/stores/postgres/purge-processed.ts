/** The retention clean-up of the processed-events table. */
import { checkDuration } from '../../base/option-checks.js';
import { statementRunner, type PostgresConnection } from './connection.js';
import { deleteCounted } from './delete-counted.js';
import { processedEventsTable, type ProcessedEventsOptions } from './processed-events-options.js';
import { WebhookOptionsError } from '../../base/options-error.js';

/** The service retries a delivery for about three days: an id must be kept at least that long. */
export const MIN_RETENTION_MS = 3 * 24 * 3600_000;

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
  const olderThanMs = options?.olderThanMs ?? 4 * 24 * 3600_000;
  checkDuration('olderThanMs', olderThanMs);
  if (olderThanMs < MIN_RETENTION_MS) {
    throw new WebhookOptionsError(`svc-webhooks: olderThanMs must be at least ${MIN_RETENTION_MS} (three days, the retry window)`);
  }
  return deleteCounted(run, `DELETE FROM ${table.sql} WHERE processed_at < now() - $1::bigint * interval '1 millisecond'`, [
    String(olderThanMs),
  ]);
}
