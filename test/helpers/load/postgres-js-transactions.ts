/**
 * Transactions with postgres.js' `sql.begin`, contained against what
 * postgres.js 3.4.9 (and every 3.3.x and 3.4.x tried) does when the server
 * ends a connection mid-transaction:
 *
 * - if the callback settles after the connection closed, `sql.begin` writes
 *   ROLLBACK or COMMIT to the closed socket, and its write loop throws an
 *   uncaught TypeError ("Cannot read properties of null (reading 'write')");
 * - the connection object can keep the dead transaction's error and query,
 *   and then fail or stall the next transactions sent to it.
 *
 * So each slot holds a postgres.js instance with one connection; when its
 * connection closes (its `onclose` fires), the callback never settles and
 * sends nothing more, `sql.begin` rejects on its own, and the instance is
 * ended and replaced, as it is after any failed transaction. `fetch_types`
 * is off: a connection killed during postgres.js' own array-type query at
 * connect would leave an unhandled rejection.
 */
import postgres from 'postgres';
import type { Outcome, TransactionRunner } from './transactional-receiver.js';

interface Slot {
  readonly sql: postgres.Sql;
  closed: boolean;
}

/** Ends the transaction with a rollback from inside the callback: postgres.js rolls back on a throw. */
class RollBack extends Error {}

const NEVER = new Promise<never>(() => {});

export interface PostgresJsTransactions extends TransactionRunner {
  /** How many instances were replaced after a lost connection or a failed transaction. */
  readonly replaced: number;
}

export function postgresJsTransactions(url: string, slots: number, options: postgres.Options<Record<string, never>> = {}): PostgresJsTransactions {
  const open = (): Slot => {
    const slot: Slot = {
      closed: false,
      sql: postgres(url, {
        ...options,
        max: 1,
        fetch_types: false,
        onnotice: () => {},
        onclose: () => {
          slot.closed = true;
        },
      }),
    };
    return slot;
  };
  const idle = Array.from({ length: slots }, open);
  const waiting: Array<(slot: Slot) => void> = [];
  let replaced = 0;

  const giveBack = (slot: Slot, healthy: boolean): void => {
    let next = slot;
    if (!healthy || slot.closed) {
      // Ending a closed instance writes nothing: it only marks it terminated.
      slot.sql.end({ timeout: 0 }).catch(() => {});
      next = open();
      replaced += 1;
    }
    const waiter = waiting.shift();
    if (waiter) waiter(next);
    else idle.push(next);
  };

  return {
    get replaced() {
      return replaced;
    },
    async run(work) {
      const slot = idle.pop() ?? (await new Promise<Slot>((resolve) => waiting.push(resolve)));
      let healthy = false;
      try {
        const outcome = await slot.sql.begin(async (sql): Promise<Outcome> => {
          // Nothing may be sent once the connection closed; markProcessed runs first, straight after BEGIN.
          const query = (text: string, params: string[]) => (slot.closed ? NEVER : sql.unsafe(text, params));
          const tx = { db: sql, query };
          let outcome: Outcome;
          try {
            outcome = await work(tx);
          } catch (error) {
            if (slot.closed) return NEVER;
            throw error;
          }
          if (slot.closed) return NEVER;
          if (outcome === 'rollback') throw new RollBack();
          return outcome;
        });
        healthy = true;
        return outcome;
      } catch (error) {
        if (!(error instanceof RollBack)) throw error;
        healthy = true;
        return 'rollback';
      } finally {
        giveBack(slot, healthy);
      }
    },
    async close() {
      await Promise.all(idle.splice(0).map((slot) => slot.sql.end({ timeout: 1 })));
    },
  };
}
