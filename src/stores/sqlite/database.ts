/**
 * The SQLite databases this entry takes, told by their shape so that neither
 * `node:sqlite` nor `better-sqlite3` is ever imported: both answer a statement
 * at once, with the same `prepare`, `exec`, `run` and `get`.
 */
import { WebhookOptionsError } from '../../base/options-error.js';

/** A value bound to a `?` placeholder. */
export type SqliteValue = string | number;

/** The part of a prepared statement (node:sqlite `StatementSync`, better-sqlite3 `Statement`) used here. */
export interface SqliteStatement {
  /** Runs the statement with its `?` placeholders bound in order; answers how many rows it changed. */
  run(...params: SqliteValue[]): {
    /** The rows the statement inserted, updated or deleted. */
    readonly changes: number | bigint;
  };
  /** Runs the statement with its `?` placeholders bound in order; answers its first row, if any. */
  get(...params: SqliteValue[]): unknown;
}

/**
 * The part of a node:sqlite `DatabaseSync` (Node 22.5 and later) or a
 * better-sqlite3 `Database` used here.
 */
export interface SqliteDatabase {
  /** Compiles one statement. */
  prepare(sql: string): SqliteStatement;
  /** Runs one or more statements that take no parameters. */
  exec(sql: string): unknown;
  /** better-sqlite3: whether a transaction is open on the connection. */
  readonly inTransaction?: boolean;
  /** node:sqlite (22.16 and later): whether a transaction is open on the connection. */
  readonly isTransaction?: boolean;
}

/**
 * `db` as a `SqliteDatabase`; `user` names the caller in the `WebhookOptionsError`
 * thrown for anything else. The `sqlite3` package's database, whose `run`
 * takes a callback and answers later, is refused: a claim must be answered
 * by the statement itself.
 */
export function sqliteDatabase(db: unknown, user: string): SqliteDatabase {
  const shape = db as Partial<Record<'prepare' | 'exec' | 'run', unknown>> | null;
  if (typeof shape === 'object' && shape !== null && typeof shape.prepare === 'function' && typeof shape.exec === 'function' && typeof shape.run !== 'function') {
    return db as SqliteDatabase;
  }
  throw new WebhookOptionsError(`svc-webhooks: ${user} needs a node:sqlite DatabaseSync or a better-sqlite3 Database`);
}

/** Matched in the message of the error that BEGIN throws inside a transaction, on every SQLite. */
const NESTED_BEGIN = /within a transaction/;

/**
 * Whether a transaction is open on `db`: its driver's flag, or, where the
 * driver has none (node:sqlite before 22.16), whether `BEGIN` is refused
 * as nested; a `BEGIN` that was not is rolled back at once, having written nothing.
 */
export function inTransaction(db: SqliteDatabase): boolean {
  const flag = db.inTransaction ?? db.isTransaction;
  if (typeof flag === 'boolean') return flag;
  try {
    db.exec('BEGIN');
  } catch (error) {
    if (error instanceof Error && NESTED_BEGIN.test(error.message)) return true;
    throw error;
  }
  db.exec('ROLLBACK');
  return false;
}
