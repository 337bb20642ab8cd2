/**
 * A receiver whose side effect is a database write: a real Express server on
 * 127.0.0.1 with the webhook route behind `verifyWebhook` (no lease store),
 * which in one transaction records the delivery's dedup key with
 * `markProcessed`, writes a side-effect row if the key is new, then meets its
 * seeded fate before commit (handler-fate.ts): its pause lets concurrent
 * copies meet on the key,
 * and it fails by throwing or by rolling back, or commits. The transaction
 * comes from a runner per client.
 */
import { createServer } from 'node:http';
import express from 'express';
import { verifyWebhook } from '../../../adapters/express.js';
import type { PostgresConnection } from '../../../src/stores/postgres/connection.js';
import { markProcessed } from '../../../src/stores/postgres/mark-processed.js';
import { closeServer, listen } from '../http-harness.js';
import { now, SECRET } from '../signed-request.js';
import { handlerFate } from './handler-fate.js';
import type { SideEffectLedger } from './side-effect-ledger.js';

/** What the transaction's work decided: commit it (an event processed, or a duplicate), or roll it back. */
export type Outcome = 'processed' | 'duplicate' | 'rollback';

export interface Transaction {
  /** The transaction's connection, as markProcessed takes it. */
  readonly db: PostgresConnection;
  query(text: string, params: string[]): Promise<unknown>;
}

export interface TransactionRunner {
  /**
   * Runs `work` in a transaction: commits unless it answers 'rollback' or
   * throws (then rolls back, and rethrows). Rejects too when the connection
   * is lost; the outcome of a commit that lost its connection is unknown.
   */
  run(work: (tx: Transaction) => Promise<Outcome>): Promise<Outcome>;
  close(): Promise<void>;
}

export interface TransactionalReceiverOptions {
  readonly runner: TransactionRunner;
  /** Counts handler calls and deliberate failures; the side effects themselves are rows. */
  readonly ledger: SideEffectLedger;
  readonly seed: number;
  /** markProcessed's table. */
  readonly table: string;
  /** The side-effect table: one row per processing, with no unique key, so a double shows. */
  readonly effects: string;
}

export interface TransactionalReceiver {
  readonly url: string;
  close(): Promise<void>;
}

export async function startTransactionalReceiver(options: TransactionalReceiverOptions): Promise<TransactionalReceiver> {
  const { runner, ledger, seed, table, effects } = options;
  const app = express();
  app.post('/webhooks', verifyWebhook({ secret: SECRET, now, dedup: false }), async (req, res) => {
    // One endpoint: the id names the event in the ledger and the side-effect rows; the dedup key is what is recorded.
    const { id, dedupKey } = req.webhook;
    const call = ledger.call(id);
    const outcome = await runner.run(async (tx) => {
      const first = await markProcessed(tx.db, dedupKey, { table });
      if (first) await tx.query(`INSERT INTO ${effects} (event_id) VALUES ($1)`, [id]);
      // Before commit: a throw rolls the transaction back, a failure rolls it back and answers 500.
      if ((await handlerFate(seed, id, call, ledger)) === 'fail') return 'rollback';
      return first ? 'processed' : 'duplicate';
    });
    if (outcome === 'rollback') res.status(500).end();
    else if (outcome === 'duplicate') res.status(200).json({ received: true, duplicate: true });
    else res.status(204).end();
  });
  const server = createServer(app);
  const base = await listen(server);
  return { url: `${base}/webhooks`, close: () => closeServer(server) };
}
