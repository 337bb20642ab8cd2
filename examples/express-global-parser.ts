/**
 * An Express receiver (4 or 5) in an app that parses JSON app-wide: the
 * parser's `verify` hook keeps the bytes as sent in `req.rawBody`, and
 * `verifyWebhook` checks those. `npx tsx examples/express-global-parser.ts`,
 * then point the service at http://127.0.0.1:3000/webhooks. Set
 * WEBHOOK_SECRET to the endpoint's secret; without it a demo secret is used.
 */
import type { Buffer } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { verifyWebhook } from 'svc-webhooks/express';

const secret = process.env.WEBHOOK_SECRET ?? 'whsec_ZXhhbXBsZS1zZWNyZXQtZm9yLWxvY2FsLXRyaWFscw==';
const app = express();

app.use(
  express.json({
    verify: (req: IncomingMessage & { rawBody?: Buffer }, _res, buf) => {
      req.rawBody = buf;
    },
  }),
);
app.post('/webhooks', verifyWebhook({ secret }), (req, res) => {
  console.log(`received ${req.webhook.event.type} ${req.webhook.id}`);
  // Enqueue the real work and answer at once: the service waits 10 s at most.
  res.status(204).end();
});

const server = app.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`);
});
