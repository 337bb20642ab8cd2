/** Creating the tables from the application, idempotently and safely from several processes at once. */
import { statementRunner, type PostgresConnection, type RunStatement } from './connection.js';
import { processedVersionsTables, type ProcessedVersionsOptions } from './processed-events-options.js';
import { processedEventsSchema, processedVersionsSchema } from './schema.js';

// 'svc-webh' in ASCII: the advisory lock two migrations of this package take in turn.
const MIGRATION_LOCK = '8319108479513978472';

/**
 * Creates the processed-events table of `markProcessed` and its index, and
 * the versions table of `markProcessedInOrder`, unless they exist. Runs on
 * any connection, a pool included. Throws `WebhookOptionsError` for bad options.
 */
export function migrateProcessedEvents(db: PostgresConnection, options?: ProcessedVersionsOptions): Promise<void> {
  const run = statementRunner(db, 'migrateProcessedEvents');
  const { events, versions } = processedVersionsTables(options);
  return applySchema(run, [...processedEventsSchema(events), ...processedVersionsSchema(versions)]);
}

/**
 * Runs the statements as one: a DO block is a single statement, so it is
 * atomic on a pool as on a client, and it goes through every client and
 * protocol. The lock keeps two processes that migrate at once from both
 * creating the table (one would fail on the catalog's unique index); the
 * quieter client_min_messages keeps "already exists, skipping" notices out
 * of the application's log.
 */
export async function applySchema(run: RunStatement, statements: readonly string[]): Promise<void> {
  // Equivalent: the indentation and line breaks only lay the block out; the statements hold no line comments or multi-line literals, so Postgres runs the same ones.
  // Stryker disable next-line StringLiteral
  const body = statements.map((statement) => `  ${statement.replaceAll('\n', '\n  ')};`).join('\n');
  await run(
    `DO $migration$\nBEGIN\n  PERFORM set_config('client_min_messages', 'warning', true);\n` +
      `  PERFORM pg_advisory_xact_lock(${MIGRATION_LOCK});\n${body}\nEND\n$migration$`,
    [],
  );
}
