/**
 * Several statements as one step of a SQLite store: a transaction of their
 * own, or a savepoint of the transaction the application left open on the
 * connection.
 */
import { inTransaction, type SqliteDatabase } from './database.js';

const SAVEPOINT = 'svc_webhooks_step';

/**
 * Runs `step`, whose statements are synchronous, atomically on `db`, and answers what it answers.
 *
 * Outside a transaction, in `BEGIN IMMEDIATE … COMMIT`: the write lock is taken before the first
 * read, so no other process on the file writes between the step's reads and its writes (a second
 * process waits for it, by its busy timeout). Inside one the application opened on the connection,
 * as a savepoint of it, as the store's single statements run there too: a throw undoes the step
 * alone, and the step commits or rolls back with the application's transaction. SQLite refuses a
 * write from a transaction whose reads another process's commit made stale, so the step still
 * never acts on an old read.
 */
export function atomicStep<T>(db: SqliteDatabase, step: () => T): T {
  const nested = inTransaction(db);
  db.exec(nested ? `SAVEPOINT ${SAVEPOINT}` : 'BEGIN IMMEDIATE');
  try {
    const answer = step();
    db.exec(nested ? `RELEASE ${SAVEPOINT}` : 'COMMIT');
    return answer;
  } catch (error) {
    // A COMMIT refused (SQLITE_BUSY in rollback-journal mode) leaves the transaction open: rolled back too.
    undo(db, nested);
    throw error;
  }
}

function undo(db: SqliteDatabase, nested: boolean): void {
  try {
    db.exec(nested ? `ROLLBACK TO ${SAVEPOINT}; RELEASE ${SAVEPOINT}` : 'ROLLBACK');
  } catch {
    // SQLite rolls a transaction back itself on some errors (a full disk, an I/O error): the step's error is the one to report.
  }
}
