/**
 * A Cloudflare Worker (module syntax). `wrangler.toml`:
 *
 *   name = "webhooks"
 *   main = "examples/cloudflare-worker.ts"
 *   compatibility_date = "2025-07-01"
 *   compatibility_flags = ["nodejs_compat"]
 *
 * Store the secret with `wrangler secret put WEBHOOK_SECRET`. The Worker
 * answers as soon as the handler returns; passing `ctx` on lets the dedup
 * claim settle after the Response, through `ctx.waitUntil`.
 */
import { verifyWebhook, type FetchWebhook } from 'svc-webhooks/fetch';

interface Env {
  readonly WEBHOOK_SECRET: string;
}

interface ExecutionContext {
  waitUntil(promise: Promise<unknown>): void;
}

// Bindings arrive with the first request; the verifier is built once per isolate, then reused.
let webhook: FetchWebhook | undefined;

export default {
  fetch(request: Request, env: Env, ctx: ExecutionContext): Promise<Response> | Response {
    if (new URL(request.url).pathname !== '/webhooks' || request.method !== 'POST') return new Response('not found', { status: 404 });
    webhook ??= verifyWebhook({ secret: env.WEBHOOK_SECRET }, (event, { id }) => {
      console.log(`received ${event.type} ${id}`);
      // Hand the work to a Queue or Durable Object here; nothing returned answers 204.
    });
    return webhook(request, env, ctx);
  },
};
