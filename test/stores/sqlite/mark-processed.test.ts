import { describe, expect, it } from 'vitest';
import { WebhookOptionsError } from '../../../src/base/options-error.js';
import type { SqliteDatabase } from '../../../src/stores/sqlite/database.js';
import { markProcessed } from '../../../src/stores/sqlite/mark-processed.js';
import { migrateProcessedEvents } from '../../../src/stores/sqlite/migrate.js';
import { purgeProcessed } from '../../../src/stores/sqlite/purge-processed.js';
import { sqliteSuite } from '../../helpers/sqlite-suite.js';

const suite = sqliteSuite();
const DAY_MS = 24 * 3600_000;
let tables = 0;

/** A database with a fresh processed-events table and a side-effect table beside it. */
function tablesFor() {
  const db = suite.open();
  const table = `processed_${++tables}`;
  migrateProcessedEvents(db, { table });
  db.exec('CREATE TABLE effects (event_id TEXT NOT NULL)');
  const effectCount = (id: string): number => (db.prepare('SELECT count(*) AS n FROM effects WHERE event_id = ?').get(id) as { n: number }).n;
  // The route's transaction: the record and the side effect, both or neither.
  const deliver = db.transaction((id: string, fail = false): boolean => {
    const first = markProcessed(db, id, { table });
    if (first) db.prepare('INSERT INTO effects (event_id) VALUES (?)').run(id);
    if (fail) throw new Error('the handler failed before commit');
    return first;
  });
  return { db, table, effectCount, deliver };
}

/** `db` without its driver's transaction flag, as node:sqlite before 22.16 is. */
function withoutFlag(db: SqliteDatabase): SqliteDatabase {
  return { prepare: (sql) => db.prepare(sql), exec: (sql) => db.exec(sql) };
}

describe('markProcessed in a SQLite transaction', () => {
  it('answers true the first time and false once that transaction committed', () => {
    const { deliver, effectCount } = tablesFor();
    expect(deliver.immediate('evt_1')).toBe(true);
    expect(deliver.immediate('evt_1')).toBe(false);
    expect(deliver.immediate('evt_2')).toBe(true);
    expect(effectCount('evt_1')).toBe(1);
  });

  it('records nothing when the transaction rolls back, so the retry processes the event', () => {
    const { db, table, deliver, effectCount } = tablesFor();
    expect(() => deliver.immediate('evt_1', true)).toThrow('the handler failed');
    db.exec('BEGIN IMMEDIATE');
    expect(markProcessed(db, 'evt_2', { table })).toBe(true);
    db.exec('ROLLBACK');
    expect(db.prepare(`SELECT count(*) AS n FROM ${table}`).get()).toEqual({ n: 0 });
    expect(effectCount('evt_1')).toBe(0);
    expect(deliver.immediate('evt_1')).toBe(true);
    expect(deliver.immediate('evt_2')).toBe(true);
    expect(effectCount('evt_1')).toBe(1);
  });

  it('is refused outside a transaction with a WebhookOptionsError, recording nothing', () => {
    const { db, table } = tablesFor();
    const outside = new WebhookOptionsError(
      'svc-webhooks: markProcessed ran outside a transaction, where the record would commit alone and a retry after a failed side effect would be skipped: call markProcessed inside the transaction that does the side effect',
    );
    expect(() => markProcessed(db, 'evt_1', { table })).toThrow(outside);
    expect(() => markProcessed(withoutFlag(db), 'evt_1', { table })).toThrow(outside);
    expect(db.prepare(`SELECT count(*) AS n FROM ${table}`).get()).toEqual({ n: 0 });
    expect(db.inTransaction).toBe(false);
  });

  it('tells a transaction by BEGIN being refused where the driver has no flag', () => {
    const { db, table } = tablesFor();
    const bare = withoutFlag(db);
    db.exec('BEGIN IMMEDIATE');
    expect(markProcessed(bare, 'evt_1', { table })).toBe(true);
    expect(markProcessed(bare, 'evt_1', { table })).toBe(false);
    db.exec('COMMIT');
    expect(db.prepare(`SELECT id FROM ${table}`).all()).toEqual([{ id: 'evt_1' }]);
    // An error of BEGIN other than nesting is the database's own, passed on.
    const failing: SqliteDatabase = {
      prepare: (sql) => db.prepare(sql),
      exec: () => {
        throw new Error('disk I/O error');
      },
    };
    expect(() => markProcessed(failing, 'evt_2', { table })).toThrow('disk I/O error');
  });

  it('throws a WebhookOptionsError for a database that is neither driver, an empty key or a bad table', () => {
    const { db } = tablesFor();
    expect(() => markProcessed({} as SqliteDatabase, 'evt_1')).toThrow(
      new WebhookOptionsError('svc-webhooks: markProcessed needs a node:sqlite DatabaseSync or a better-sqlite3 Database'),
    );
    for (const key of ['', 5, undefined]) {
      expect(() => markProcessed(db, key as string)).toThrow(new WebhookOptionsError('svc-webhooks: the key to mark must be a non-empty string'));
    }
    expect(() => markProcessed(db, 'evt_1', { table: 'Processed' })).toThrow(/^svc-webhooks: table must be a table name/);
    expect(() => markProcessed(db, 'evt_1', 5 as unknown as object)).toThrow(new WebhookOptionsError('svc-webhooks: processed events options must be an object'));
  });
});

describe('the processed-events table', () => {
  it('is created by migrateProcessedEvents unless it exists, with svc_webhooks_processed_events by default', () => {
    const db = suite.open();
    migrateProcessedEvents(db);
    migrateProcessedEvents(db);
    const schema = db.prepare("SELECT type, name FROM sqlite_schema WHERE tbl_name = 'svc_webhooks_processed_events' ORDER BY name").all();
    expect(schema).toEqual([
      { type: 'table', name: 'svc_webhooks_processed_events' },
      { type: 'index', name: 'svc_webhooks_processed_events_processed_at_idx' },
    ]);
    db.transaction(() => markProcessed(db, 'evt_1')).immediate();
    const { processed_at: stamp } = db.prepare('SELECT processed_at FROM svc_webhooks_processed_events').get() as { processed_at: number };
    // Stamped by the database's clock, in milliseconds since the epoch: within the minute around now.
    expect(Math.abs(stamp - Date.now())).toBeLessThan(60_000);
  });

  it('purgeProcessed deletes the ids recorded more than olderThanMs ago, and answers how many', () => {
    const { db, table, deliver } = tablesFor();
    deliver.immediate('evt_new');
    const ageBy = db.prepare(`UPDATE ${table} SET processed_at = processed_at - ? WHERE id = ?`);
    for (const [id, ageMs] of [
      ['evt_5_days', 5 * DAY_MS],
      ['evt_3_5_days', 3.5 * DAY_MS],
    ] as const) {
      deliver.immediate(id);
      ageBy.run(ageMs, id);
    }
    expect(purgeProcessed(db, { table })).toBe(1);
    expect(purgeProcessed(db, { table, olderThanMs: 3 * DAY_MS })).toBe(1);
    expect(db.prepare(`SELECT id FROM ${table}`).all()).toEqual([{ id: 'evt_new' }]);
    expect(purgeProcessed(db, { table, olderThanMs: 3 * DAY_MS })).toBe(0);
  });

  it('purgeProcessed refuses an age under three days, the retry window, or a database that is neither driver', () => {
    const { db, table } = tablesFor();
    expect(() => purgeProcessed(db, { table, olderThanMs: 3 * DAY_MS - 1 })).toThrow(
      new WebhookOptionsError('svc-webhooks: olderThanMs must be at least 259200000 (three days, the retry window)'),
    );
    expect(() => purgeProcessed(db, { table, olderThanMs: 0 })).toThrow(/^svc-webhooks: olderThanMs must be a whole number/);
    expect(() => purgeProcessed('app.db' as unknown as SqliteDatabase)).toThrow(/^svc-webhooks: purgeProcessed needs a node:sqlite DatabaseSync/);
    expect(() => migrateProcessedEvents(null as unknown as SqliteDatabase)).toThrow(/^svc-webhooks: migrateProcessedEvents needs a node:sqlite DatabaseSync/);
  });
});
