/**
 * The receiver of the ordering run on Postgres, in a process of its own to
 * be SIGKILLed mid-run: Express on the port of `ORDERING_SETTINGS` (JSON),
 * verification without a dedup store, and a route that applies each event
 * in its own transaction with markProcessedInOrder (apply-in-order.ts):
 * 204 once applied, 200 stale or duplicate otherwise. Prints `ready` once
 * it listens.
 */
import { createServer } from 'node:http';
import express from 'express';
import { verifyWebhook } from '../../../adapters/express.js';
import { pgPool } from '../postgres-clients.js';
import { now, SECRET } from '../signed-request.js';
import { applyInOrder, type InOrderTables } from './apply-in-order.js';

const settings = JSON.parse(process.env.ORDERING_SETTINGS!) as InOrderTables & { readonly url: string; readonly port: number };
const pool = pgPool(settings.url, { max: 16, connectionTimeoutMillis: 2_000 });
const app = express();
app.post('/webhooks', verifyWebhook({ secret: SECRET, now, dedup: false }), async (req, res) => {
  const result = await applyInOrder(pool, settings, req.webhook);
  if (result === 'apply') res.status(204).end();
  else res.status(200).json({ received: true, [result]: true });
});
createServer(app).listen(settings.port, '127.0.0.1', () => console.log('ready'));
