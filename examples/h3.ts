/**
 * An h3 2 receiver on Node: `npx tsx examples/h3.ts`, then point the service
 * at http://127.0.0.1:3000/webhooks. Set WEBHOOK_SECRET to the endpoint's
 * secret; without it a demo secret is used. On Nitro or Nuxt, the handler is
 * a server route's default export instead (see examples/nitro).
 */
import { H3, toNodeHandler } from 'h3';
import { createServer } from 'node:http';
import { verifyWebhook } from 'svc-webhooks/h3';

const secret = process.env.WEBHOOK_SECRET ?? 'whsec_ZXhhbXBsZS1zZWNyZXQtZm9yLWxvY2FsLXRyaWFscw==';

const app = new H3().post(
  '/webhooks',
  verifyWebhook({
    secret,
    on: {
      'call.missed': (event, { id }) => {
        console.log(`received ${event.type} ${id}`);
        // Enqueue the real work and return at once: the service waits 10 s at most.
      },
    },
  }),
);

const server = createServer(toNodeHandler(app)).listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  const { port } = server.address() as { port: number };
  console.log(`listening on http://127.0.0.1:${port}/webhooks`);
});
