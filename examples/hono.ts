/**
 * A Hono receiver on Node: `npx tsx examples/hono.ts`, then point the
 * service at http://127.0.0.1:3000/webhooks. Set WEBHOOK_SECRET to the
 * endpoint's secret; without it a demo secret is used.
 */
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { verifyWebhook } from 'svc-webhooks/hono';

const secret = process.env.WEBHOOK_SECRET ?? 'whsec_ZXhhbXBsZS1zZWNyZXQtZm9yLWxvY2FsLXRyaWFscw==';
const app = new Hono();

app.post('/webhooks', verifyWebhook({ secret }), (c) => {
  console.log(`received ${c.var.webhook.event.type} ${c.var.webhook.id}`);
  // Enqueue the real work and answer at once: the service waits 10 s at most.
  return c.body(null, 204);
});

serve({ fetch: app.fetch, port: Number(process.env.PORT ?? 3000), hostname: '127.0.0.1' }, ({ port }) =>
  console.log(`listening on http://127.0.0.1:${port}/webhooks`),
);
