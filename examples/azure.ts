/**
 * An Azure Functions app for webhooks, on the v4 programming model: the
 * function `webhooks` answers POST /api/webhooks. Run it with Azure
 * Functions Core Tools (`func start`) after compiling, or deploy it as any
 * Node.js function app, with WEBHOOK_SECRET in the app's settings; without
 * it a demo secret is used. The route needs no function key: the signature
 * authenticates each request.
 */
// @azure/functions is CommonJS whose named exports Node 20 and 22 cannot see from an ES module: take its default.
import functions from '@azure/functions';
import { MemoryDedupStore } from 'svc-webhooks';
import { verifyWebhook } from 'svc-webhooks/azure';

const secret = process.env.WEBHOOK_SECRET ?? 'whsec_ZXhhbXBsZS1zZWNyZXQtZm9yLWxvY2FsLXRyaWFscw==';

// Lives as long as the worker process: several instances need a shared store (RedisDedupStore).
const dedup = new MemoryDedupStore();

export const webhooks = verifyWebhook({ secret, dedup: { store: dedup } }, async (event, { id, context }) => {
  context.log(`received ${event.type} ${id}`);
  // Enqueue the real work and answer at once: the service waits 10 s at most. Nothing returned answers 204.
});

functions.app.http('webhooks', { methods: ['POST'], authLevel: 'anonymous', handler: webhooks });
