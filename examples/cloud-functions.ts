/**
 * A Google Cloud Functions receiver: deploy with `--entry-point=webhooks`, or
 * run it here with
 * `NODE_OPTIONS='--import tsx' npx functions-framework --source=examples/cloud-functions.ts --target=webhooks`
 * and point the service at http://localhost:8080/. Set WEBHOOK_SECRET to the
 * endpoint's secret; without it a demo secret is used.
 */
import { http } from '@google-cloud/functions-framework';
import express from 'express';
import { verifyWebhook } from 'svc-webhooks/express';

const secret = process.env.WEBHOOK_SECRET ?? 'whsec_ZXhhbXBsZS1zZWNyZXQtZm9yLWxvY2FsLXRyaWFscw==';
const app = express();

// The framework has parsed the body already and kept the bytes in req.rawBody: verifyWebhook checks those.
app.post('/', verifyWebhook({ secret }), (req, res) => {
  console.log(`received ${req.webhook.event.type} ${req.webhook.id}`);
  // Enqueue the real work and answer at once: the service waits 10 s at most.
  res.status(204).end();
});

http('webhooks', app);
