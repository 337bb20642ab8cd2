/**
 * One receiver instance: a real Express server on 127.0.0.1 with the webhook
 * route behind `verifyWebhook`, whose handler fails at random before its side
 * effect and otherwise records it after a short random delay, so deliveries
 * of the same event really overlap.
 */
import { createServer } from 'node:http';
import express from 'express';
import { verifyWebhook } from '../../adapters/express.js';
import type { DedupStore } from '../../src/index.js';
import { closeServer, listen } from '../helpers/http-harness.js';
import { SECRET, now } from '../helpers/signed-request.js';
import { handlerFate } from './handler-fate.js';
import type { SideEffectLedger } from './side-effect-ledger.js';

/** Longer than any handler run here, short enough that an orphaned lease is not waited on long. */
const LEASE_MS = 2000;

export interface ReceiverInstanceOptions {
  readonly dedup: DedupStore;
  readonly ledger: SideEffectLedger;
  readonly seed: number;
  /** Told about a complete or release that failed after the handler ran. */
  readonly onStoreError?: (error: unknown) => void;
}

export interface ReceiverInstance {
  /** The webhook route's URL. */
  readonly url: string;
  close(): Promise<void>;
}

export async function startReceiverInstance(options: ReceiverInstanceOptions): Promise<ReceiverInstance> {
  const { dedup, ledger, seed, onStoreError } = options;
  const app = express();
  app.post('/webhooks', verifyWebhook({ secret: SECRET, now, dedup, leaseMs: LEASE_MS, onStoreError }), async (req, res) => {
    const id = req.webhookId;
    if ((await handlerFate(seed, id, ledger.call(id), ledger)) === 'fail') {
      res.status(500).end();
      return;
    }
    ledger.process(id);
    res.status(204).end();
  });
  const server = createServer(app);
  const base = await listen(server);
  return { url: `${base}/webhooks`, close: () => closeServer(server) };
}
