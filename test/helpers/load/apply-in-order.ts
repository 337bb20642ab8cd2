/**
 * The handler of the ordering runs whose side effect is a Postgres write in
 * its own transaction: markProcessedInOrder records the event and its
 * object's version, and only on 'apply' does the handler write the apply
 * and the object's state, in the same transaction; a stale or duplicate
 * event writes its skip instead. Run by the receiver and the pg-boss
 * worker processes.
 */
import type pg from 'pg';
import type { WebhookDelivery } from '../../../src/index.js';
import { inTransaction } from '../../../src/queues/pg-boss/transaction.js';
import { markProcessedInOrder, type MarkInOrderResult } from '../../../src/stores/postgres/index.js';
import { orderOf } from './ordered-events.js';
import { recordApply, recordSkip, type LedgerTables } from './ordering-ledger.js';

/** Where the transaction records: markProcessedInOrder's tables, and the run's ledger. */
export interface InOrderTables {
  readonly processed: string;
  readonly versions: string;
  readonly ledger: LedgerTables;
}

/** A bound far above any transaction of the runs: one that passes it fails, and is retried. */
const TRANSACTION_MS = 30_000;

export function applyInOrder(pool: pg.Pool, tables: InOrderTables, delivery: WebhookDelivery): Promise<MarkInOrderResult> {
  return inTransaction(
    pool,
    async (client) => {
      const result = await markProcessedInOrder(client, delivery, { version: (event) => event.timestamp }, { table: tables.processed, versionsTable: tables.versions });
      const { id } = delivery.event;
      if (result === 'apply') {
        const { object, version } = orderOf(delivery.event);
        await recordApply(client, tables.ledger, id, object, version);
      } else await recordSkip(client, tables.ledger, id, result);
      return { commit: true, value: result };
    },
    TRANSACTION_MS,
  );
}
