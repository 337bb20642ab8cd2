/**
 * A Next.js App Router route handler: POST /api/webhooks. Set WEBHOOK_SECRET
 * to the endpoint's secret; without it a demo secret is used.
 * instrumentation.ts imports this route as the server starts, so that a bad
 * option (an empty WEBHOOK_SECRET) stops the start.
 */
import { verifyWebhook } from 'svc-webhooks/fetch';

const secret = process.env.WEBHOOK_SECRET ?? 'whsec_ZXhhbXBsZS1zZWNyZXQtZm9yLWxvY2FsLXRyaWFscw==';

export const POST = verifyWebhook({ secret }, (event, { id }) => {
  console.log(`received ${event.type} ${id}`);
  // Enqueue the real work and answer at once: the service waits 10 s at most. Nothing returned answers 204.
});
