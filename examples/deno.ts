/**
 * A receiver on Deno, served by `deno serve` from the default export:
 *   npx deno serve --unstable-sloppy-imports --allow-env --host 127.0.0.1 --port 3000 examples/deno.ts
 * then point the service at http://127.0.0.1:3000/webhooks. (Sloppy imports
 * only let Deno run this repository's .ts sources; an app imports
 * `npm:svc-webhooks/fetch`.) Set WEBHOOK_SECRET to the endpoint's secret;
 * without it a demo secret is used.
 */
import { verifyWebhook } from '../adapters/fetch.js';

const secret = process.env.WEBHOOK_SECRET ?? 'whsec_ZXhhbXBsZS1zZWNyZXQtZm9yLWxvY2FsLXRyaWFscw==';

const webhook = verifyWebhook({ secret }, async (event, { id, request }) => {
  console.log(`received ${event.type} ${id} from ${request.headers.get('user-agent') ?? 'an unnamed sender'}`);
  // Answer what you like; a 2xx tells the service to stop retrying.
  return Response.json({ received: id }, { status: 202 });
});

export default {
  fetch(request: Request): Promise<Response> | Response {
    const { pathname } = new URL(request.url);
    if (pathname === '/webhooks' && request.method === 'POST') return webhook(request);
    return new Response('not found', { status: 404 });
  },
};
