/**
 * One transaction on a pg `Pool`, within a deadline: a client of its own,
 * BEGIN, the work, COMMIT or ROLLBACK. A client whose connection failed, or
 * whose transaction outlived the deadline, is destroyed on release instead
 * of going back to the pool.
 */
import { beforeDeadline } from '../../base/deadlines.js';

/** The part of a pg `PoolClient` used here. */
export interface PgPoolClient {
  /** Runs one statement with `$1`, `$2`… placeholders. */
  query(
    text: string,
    values?: unknown[],
  ): Promise<{
    /** The statement's rows. */
    rows: unknown[];
  }>;
  /** Gives the client back to its pool; with an error (or `true`), destroys it instead. */
  release(error?: Error | boolean): void;
  /** Listens for the connection's failure while the client is checked out. */
  on(event: 'error', listener: (error: Error) => void): unknown;
  /** Stops listening, before the client goes back. */
  off(event: 'error', listener: (error: Error) => void): unknown;
}

/** The part of a pg `Pool` used here. */
export interface PgPool {
  /** Checks a client out of the pool, for one transaction. */
  connect(): Promise<PgPoolClient>;
}

/** What the work decided: commit it and resolve to `value`, or roll it back and resolve to `value`. */
export interface TransactionOutcome<T> {
  readonly commit: boolean;
  readonly value: T;
}

/** What a transaction is doing when its deadline passes, for the error that says so. */
type Stage = 'connecting' | 'working' | 'committing';

const LATE = Symbol('late');

/**
 * Runs `work` in a transaction on a client of `pool`, and rejects unless it
 * ended within `timeoutMs`. Rejects when the work throws (after ROLLBACK) or
 * any statement fails; when COMMIT itself failed, whether the transaction
 * committed is unknown to the caller.
 *
 * Once `timeoutMs` has passed, COMMIT is never sent, and the client is
 * destroyed at once rather than given back: its server rolls back what the
 * transaction did, and no later user of the pool can commit it. So a
 * transaction whose COMMIT was not sent by the deadline never commits; one
 * whose COMMIT was sent and not yet answered may. A client the pool gives
 * after the deadline goes back to it untouched.
 */
export async function inTransaction<T>(pool: PgPool, work: (client: PgPoolClient) => Promise<TransactionOutcome<T>>, timeoutMs: number): Promise<T> {
  let stage: Stage = 'connecting';
  let late = false;
  let abandon = (): void => {};
  const run = async (): Promise<T> => {
    const client = await pool.connect();
    if (late) {
      // Nothing ran on it: it goes back as it came. The caller was answered at the deadline, so nobody reads this rejection.
      client.release();
      // Only its message differs, and the rejection is read by nobody (see above).
      // Stryker disable next-line StringLiteral
      throw new Error('svc-webhooks: a client came after the deadline');
    }
    let broken: Error | undefined;
    let released = false;
    // The server may end the connection between statements: pg then emits 'error' on the client, uncaught otherwise.
    const onError = (error: Error): void => {
      broken = error;
    };
    const release = (destroy: Error | false): void => {
      if (released) return;
      released = true;
      client.off('error', onError);
      client.release(destroy);
    };
    // A statement may never be answered: destroying the client ends it, and with it the transaction, uncommitted.
    abandon = () => release(new Error('svc-webhooks: the transaction passed its deadline'));
    client.on('error', onError);
    stage = 'working';
    try {
      await client.query('BEGIN');
      const outcome = await work(client);
      // Checked in the turn that sends COMMIT, so the deadline cannot pass between them: a commit after it would outlive the 503 that released the claim.
      // Its message is read by nobody: the caller was answered at the deadline, with the message of lateMessage.
      // Stryker disable next-line StringLiteral
      if (late) throw new Error('svc-webhooks: the work ended after the deadline');
      if (outcome.commit) stage = 'committing';
      await client.query(outcome.commit ? 'COMMIT' : 'ROLLBACK');
      return outcome.value;
    } catch (error) {
      if (broken === undefined && !late) {
        await client.query('ROLLBACK').catch((rollbackFailure: Error) => {
          broken = rollbackFailure;
        });
      }
      throw error;
    } finally {
      release(broken ?? false);
    }
  };
  const settled = await beforeDeadline(run(), timeoutMs, (): typeof LATE => {
    late = true;
    abandon();
    return LATE;
  });
  if (settled === LATE) throw new Error(lateMessage(stage, timeoutMs));
  return settled;
}

/** Why a transaction failed its deadline, by how far it had got. */
function lateMessage(stage: Stage, timeoutMs: number): string {
  switch (stage) {
    case 'connecting':
      return `svc-webhooks: the pool gave no client within ${timeoutMs} ms`;
    case 'working':
      return `svc-webhooks: the transaction did not end within ${timeoutMs} ms; it was not committed, and its connection was closed`;
    case 'committing':
      return `svc-webhooks: COMMIT was not answered within ${timeoutMs} ms; the transaction may have committed (a retry then finds its record), and its connection was closed`;
  }
}
