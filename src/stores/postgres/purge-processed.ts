/** The retention clean-up of the processed-events table. */
import { statementRunner, type PostgresConnection } from './connection.js';
import { deleteCounted, deleteCountedIfTable } from './delete-counted.js';
import { processedVersionsTables, type ProcessedVersionsOptions } from './processed-events-options.js';
import { purgeAge } from '../retry-window.js';

/** Options of `purgeProcessed()`. */
export interface PurgeProcessedOptions extends ProcessedVersionsOptions {
  /**
   * Ids recorded longer ago than this, in milliseconds, are deleted, and the
   * versions of objects whose last version was recorded before then. At
   * least three days (the service's retry window): a retry of a forgotten
   * event would be processed again, and an older event of a forgotten object
   * applied.
   * @default 345600000 (four days)
   */
  readonly olderThanMs?: number;
}

const OLDER_THAN = "processed_at < now() - $1::bigint * interval '1 millisecond'";

/**
 * Deletes the ids recorded more than `olderThanMs` ago, then the versions
 * of `markProcessedInOrder` recorded as long ago (where its table exists);
 * resolves to how many rows. Run it from a scheduled job. Throws
 * `WebhookOptionsError` for bad options, an age under three days among them.
 */
export function purgeProcessed(db: PostgresConnection, options?: PurgeProcessedOptions): Promise<number> {
  const run = statementRunner(db, 'purgeProcessed');
  const tables = processedVersionsTables(options);
  const params = [String(purgeAge(options?.olderThanMs))];
  return deleteCounted(run, `DELETE FROM ${tables.events.sql} WHERE ${OLDER_THAN}`, params).then(
    async (ids) => ids + (await deleteCountedIfTable(run, `DELETE FROM ${tables.versions.sql} WHERE ${OLDER_THAN}`, params)),
  );
}
