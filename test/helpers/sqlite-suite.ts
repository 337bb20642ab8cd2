/**
 * The shared set-up of a SQLite suite: a temporary directory for its files,
 * removed after the suite with every database opened in it closed first.
 * Databases are better-sqlite3's (node:sqlite needs Node 22.5, which the
 * runtime matrix covers) in WAL mode, as the guide has them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll } from 'vitest';

export interface SqliteSuite {
  /** A path in the suite's directory, new for each call. */
  file(): string;
  /** A database on `file` (a new one by default) in WAL mode, closed after the suite. */
  open(file?: string): Database.Database;
}

export function sqliteSuite(): SqliteSuite {
  const dir = mkdtempSync(join(tmpdir(), 'svc-webhooks-sqlite-'));
  const opened: Database.Database[] = [];
  let files = 0;
  afterAll(() => {
    for (const db of opened) db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const file = (): string => join(dir, `test-${++files}.db`);
  return {
    file,
    open(path = file()) {
      const db = new Database(path);
      db.pragma('journal_mode = WAL');
      opened.push(db);
      return db;
    },
  };
}
