/**
 * A receiver on Bun: `npx bun examples/bun.ts`, then point the service at
 * http://127.0.0.1:3000/webhooks. Bun serves the default export (Bun.serve's
 * options); the webhook handler is the route's POST handler as it is. Set
 * WEBHOOK_SECRET to the endpoint's secret; without it a demo secret is used.
 */
import { MemoryDedupStore } from 'svc-webhooks';
import { verifyWebhook } from 'svc-webhooks/fetch';

const secret = process.env.WEBHOOK_SECRET ?? 'whsec_ZXhhbXBsZS1zZWNyZXQtZm9yLWxvY2FsLXRyaWFscw==';

// Each event id reaches the handler once per process, retries included.
const webhook = verifyWebhook({ secret, dedup: { store: new MemoryDedupStore() } }, (event, { id }) => {
  console.log(`received ${event.type} ${id}`);
  // Enqueue the real work and answer at once: the service waits 10 s at most. Nothing returned answers 204.
});

export default {
  port: Number(process.env.PORT ?? 3000),
  hostname: '127.0.0.1',
  routes: { '/webhooks': { POST: webhook } },
  fetch: () => new Response('not found', { status: 404 }),
};
