/**
 * A Fastify receiver, on Fastify 4 or 5: `npx tsx examples/fastify.ts`, then
 * point the service at http://127.0.0.1:3000/webhooks. Set WEBHOOK_SECRET to
 * the endpoint's secret; without it a demo secret is used.
 */
import Fastify from 'fastify';
import { verifyWebhook } from 'svc-webhooks/fastify';

const secret = process.env.WEBHOOK_SECRET ?? 'whsec_ZXhhbXBsZS1zZWNyZXQtZm9yLWxvY2FsLXRyaWFscw==';
const app = Fastify();

// Routes registered in `routes` are verified; every other route keeps Fastify's JSON parsing.
await app.register(
  verifyWebhook({
    secret,
    routes(webhooks) {
      webhooks.post('/webhooks', async (request, reply) => {
        console.log(`received ${request.webhook.event.type} ${request.webhook.id}`);
        // Enqueue the real work and answer at once: the service waits 10 s at most.
        return reply.code(204).send();
      });
    },
  }),
);

const address = await app.listen({ port: Number(process.env.PORT ?? 3000), host: '127.0.0.1' });
console.log(`listening on ${address}/webhooks`);
