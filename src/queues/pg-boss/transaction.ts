/**
 * One transaction on a pg `Pool`: a client of its own, BEGIN, the work,
 * COMMIT or ROLLBACK. A client whose connection failed is destroyed on
 * release instead of going back to the pool.
 */

/** The part of a pg `PoolClient` used here. */
export interface PgPoolClient {
  /** Runs one statement with `$1`, `$2`… placeholders. */
  query(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>;
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

/**
 * Runs `work` in a transaction on a client of `pool`. Rejects when the work
 * throws (after ROLLBACK) or any statement fails; when COMMIT itself failed,
 * whether the transaction committed is unknown to the caller.
 */
export async function inTransaction<T>(pool: PgPool, work: (client: PgPoolClient) => Promise<TransactionOutcome<T>>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  // The server may end the connection between statements: pg then emits 'error' on the client, uncaught otherwise.
  const onError = (error: Error): void => {
    broken = error;
  };
  client.on('error', onError);
  try {
    await client.query('BEGIN');
    const outcome = await work(client);
    await client.query(outcome.commit ? 'COMMIT' : 'ROLLBACK');
    return outcome.value;
  } catch (error) {
    if (broken === undefined) {
      await client.query('ROLLBACK').catch((rollbackFailure: Error) => {
        broken = rollbackFailure;
      });
    }
    throw error;
  } finally {
    client.off('error', onError);
    client.release(broken ?? false);
  }
}
