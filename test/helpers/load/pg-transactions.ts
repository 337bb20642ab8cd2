/**
 * Transactions on a pg Pool, as an application would run them: a client of
 * its own, BEGIN, the work, COMMIT or ROLLBACK. A client whose connection was
 * lost is destroyed on release instead of going back to the pool.
 */
import type pg from 'pg';
import type { TransactionRunner } from './transactional-receiver.js';

export function pgTransactions(pool: pg.Pool): TransactionRunner {
  return {
    async run(work) {
      const client = await pool.connect();
      let lost: Error | undefined;
      // A connection the server ends emits 'error' on the client, which would otherwise be uncaught.
      const onError = (error: Error): void => {
        lost = error;
      };
      client.on('error', onError);
      try {
        await client.query('BEGIN');
        const outcome = await work({ db: client, query: (text, params) => client.query(text, params) });
        await client.query(outcome === 'rollback' ? 'ROLLBACK' : 'COMMIT');
        return outcome;
      } catch (error) {
        if (lost === undefined) {
          await client.query('ROLLBACK').catch((rollbackError: Error) => {
            lost = rollbackError;
          });
        }
        throw error;
      } finally {
        client.off('error', onError);
        client.release(lost);
      }
    },
    close: () => pool.end(),
  };
}
