/**
 * An Express receiver, on Express 4 or 5: `npx tsx examples/express.ts`, then
 * point the service (or `npm run demo`'s signing code) at
 * http://127.0.0.1:3000/webhooks. Set WEBHOOK_SECRET to the endpoint's
 * secret; without it a demo secret is used.
 */
import type { AddressInfo } from 'node:net';
import express from 'express';
import { verifyWebhook } from 'svc-webhooks/express';

const secret = process.env.WEBHOOK_SECRET ?? 'whsec_ZXhhbXBsZS1zZWNyZXQtZm9yLWxvY2FsLXRyaWFscw==';
const app = express();

// The webhook route reads its own raw body; express.json() is mounted for the other routes only, after it.
app.post('/webhooks', verifyWebhook({ secret }), (req, res) => {
  console.log(`received ${req.webhook.event.type} ${req.webhook.id}`);
  // Enqueue the real work and answer at once: the service waits 10 s at most.
  res.status(204).end();
});
app.use(express.json());

const server = app.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`);
});
