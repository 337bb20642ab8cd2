import { describe, expect, it } from 'vitest';
import { atomicStep } from '../../../src/stores/sqlite/atomic-step.js';
import type { SqliteDatabase } from '../../../src/stores/sqlite/database.js';
import { sqliteSuite } from '../../helpers/sqlite-suite.js';

const suite = sqliteSuite();

/** A database with a table `t` of one column. */
function withTable() {
  const db = suite.open();
  db.exec('CREATE TABLE t (v TEXT NOT NULL)');
  const insert = (v: string) => db.prepare('INSERT INTO t (v) VALUES (?)').run(v);
  const values = () => db.prepare('SELECT v FROM t ORDER BY rowid').all();
  return { db, insert, values };
}

/** `db` without its driver's transaction flag, as node:sqlite before 22.16 is. */
function withoutFlag(db: SqliteDatabase): SqliteDatabase {
  return { prepare: (sql) => db.prepare(sql), exec: (sql) => db.exec(sql) };
}

/** A database whose exec records each statement and throws for `refused`. */
function recording(refused: string): { db: SqliteDatabase; executed: string[] } {
  const executed: string[] = [];
  const db: SqliteDatabase = {
    inTransaction: false,
    prepare: () => ({ run: () => ({ changes: 0 }), get: () => undefined }),
    exec: (sql) => {
      executed.push(sql);
      if (sql === refused) throw new Error(`${refused} refused`);
    },
  };
  return { db, executed };
}

describe('atomicStep', () => {
  it('commits the writes of a step outside a transaction, and answers what the step answers', () => {
    for (const flagged of [true, false]) {
      const { db, insert, values } = withTable();
      expect(atomicStep(flagged ? db : withoutFlag(db), () => (insert('a'), insert('b'), 'answer'))).toBe('answer');
      expect(db.inTransaction).toBe(false);
      expect(values()).toEqual([{ v: 'a' }, { v: 'b' }]);
    }
  });

  it('rolls back every write of a step that throws, and throws what it threw', () => {
    for (const flagged of [true, false]) {
      const { db, insert, values } = withTable();
      const failure = new Error('the step failed');
      expect(() =>
        atomicStep(flagged ? db : withoutFlag(db), () => {
          insert('a');
          throw failure;
        }),
      ).toThrow(failure);
      expect(db.inTransaction).toBe(false);
      expect(values()).toEqual([]);
    }
  });

  it("takes the file's write lock before the step runs: another connection cannot write meanwhile", () => {
    const file = suite.file();
    const db = suite.open(file);
    db.exec('CREATE TABLE t (v TEXT NOT NULL)');
    const other = suite.open(file);
    other.pragma('busy_timeout = 0');
    atomicStep(db, () => {
      expect(() => other.prepare("INSERT INTO t (v) VALUES ('other')").run()).toThrow(/database is locked/);
    });
    other.prepare("INSERT INTO t (v) VALUES ('other')").run();
  });

  it("runs as a savepoint of the application's open transaction: its writes stay for that transaction to commit or roll back", () => {
    for (const flagged of [true, false]) {
      const { db, insert, values } = withTable();
      db.exec('BEGIN');
      insert('app');
      atomicStep(flagged ? db : withoutFlag(db), () => insert('step'));
      expect(db.inTransaction).toBe(true);
      expect(() =>
        atomicStep(db, () => {
          insert('undone');
          throw new Error('the step failed');
        }),
      ).toThrow('the step failed');
      expect(db.inTransaction).toBe(true);
      db.exec('COMMIT');
      expect(values()).toEqual([{ v: 'app' }, { v: 'step' }]);
    }
  });

  it('rolls back a transaction whose COMMIT was refused, leaving none open', () => {
    const { db, executed } = recording('COMMIT');
    expect(() => atomicStep(db, () => 'answer')).toThrow('COMMIT refused');
    expect(executed).toEqual(['BEGIN IMMEDIATE', 'COMMIT', 'ROLLBACK']);
  });

  it("throws the step's error when SQLite had rolled the transaction back itself", () => {
    const { db, executed } = recording('ROLLBACK');
    expect(() =>
      atomicStep(db, () => {
        throw new Error('disk I/O error');
      }),
    ).toThrow('disk I/O error');
    expect(executed).toEqual(['BEGIN IMMEDIATE', 'ROLLBACK']);
  });
});
