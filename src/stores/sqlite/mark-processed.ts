/**
 * Exactly once, when the side effect is a write to the same SQLite file: the
 * delivery's dedup key is recorded in the caller's own transaction, so the
 * record commits or rolls back with the caller's writes.
 */
import { WebhookOptionsError } from '../../base/options-error.js';
import { inTransaction, sqliteDatabase, type SqliteDatabase } from './database.js';
import { processedEventsTable, type SqliteProcessedEventsOptions } from './processed-events-options.js';

/**
 * Records `key` (a delivery's `dedupKey`) as processed, inside the caller's
 * open transaction on `db`. Answers true the first time, false if the event
 * was processed before: then skip the side effect. Synchronous, as the
 * drivers are, so it runs inside better-sqlite3's `db.transaction()`.
 *
 * `INSERT … ON CONFLICT DO NOTHING` on the table's primary key. SQLite lets
 * one transaction write at a time: open it with `BEGIN IMMEDIATE`
 * (better-sqlite3: `db.transaction(fn).immediate()`), so that a second
 * process waits for the first to end (the driver's busy timeout), then finds
 * the key if the first committed.
 *
 * Throws `WebhookOptionsError` for a `db` that is neither driver, an empty
 * key or bad options, and, recording nothing, when no transaction is open on
 * `db`: recorded there, the key would commit alone, and if the side effect
 * then failed its retry would be skipped as a duplicate.
 *
 * @example
 * ```ts
 * import Database from 'better-sqlite3';
 * import { markProcessed, migrateProcessedEvents } from 'svc-webhooks/sqlite';
 *
 * const db = new Database('app.db');
 * migrateProcessedEvents(db);
 * const record = db.transaction((dedupKey: string, id: string) => {
 *   if (markProcessed(db, dedupKey)) db.prepare('INSERT INTO messages (id) VALUES (?)').run(id);
 * });
 * record.immediate(delivery.dedupKey, delivery.event.data.object.id);
 * ```
 */
export function markProcessed(db: SqliteDatabase, key: string, options?: SqliteProcessedEventsOptions): boolean {
  const database = sqliteDatabase(db, 'markProcessed');
  if (typeof key !== 'string' || key === '') throw new WebhookOptionsError('svc-webhooks: the key to mark must be a non-empty string');
  const table = processedEventsTable(options);
  if (!inTransaction(database)) {
    throw new WebhookOptionsError(
      'svc-webhooks: markProcessed ran outside a transaction, where the record would commit alone and a retry ' +
        'after a failed side effect would be skipped: call markProcessed inside the transaction that does the side effect',
    );
  }
  const { changes } = database.prepare(`INSERT INTO ${table.sql} (id) VALUES (?) ON CONFLICT (id) DO NOTHING`).run(key);
  return Number(changes) === 1;
}
