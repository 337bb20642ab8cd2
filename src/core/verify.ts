/** `verify()`, `verifyDelivery()` and `verifyAsync()`: verification in one call, for a request read by the caller. */
import type { WebhookEvent } from './event.js';
import type { WebhookHeaders } from './headers.js';
import { cachedKeys } from './key-cache.js';
import { resolveVerifyOptions, type VerifyOptions } from './options.js';
import type { WebhookPayload } from './payload.js';
import type { WebhookSecret } from './secret.js';
import type { WebhookDelivery } from './delivery.js';
import { verifyOnThisRuntime, verifyWithKeys } from './verify-delivery.js';

/**
 * Verifies a webhook request and returns its id, timestamp and event.
 * Throws `WebhookVerificationError` for a request to refuse, `WebhookOptionsError` for
 * a malformed secret or options.
 */
export function verifyDelivery(
  payload: WebhookPayload,
  headers: WebhookHeaders,
  secret: WebhookSecret,
  options?: VerifyOptions,
): WebhookDelivery {
  return verifyWithKeys(payload, headers, cachedKeys(secret), resolveVerifyOptions(options));
}

/** Verifies a webhook request and returns its parsed event. See `verifyDelivery`. */
export function verify(
  payload: WebhookPayload,
  headers: WebhookHeaders,
  secret: WebhookSecret,
  options?: VerifyOptions,
): WebhookEvent {
  return verifyDelivery(payload, headers, secret, options).event;
}

/**
 * Verifies a webhook request and resolves to its parsed event, on every
 * runtime: with `node:crypto` where the runtime has it (Node, Bun, Deno),
 * else with Web Crypto (Vercel Edge, Cloudflare Workers without
 * `nodejs_compat`), each secret's key imported once and kept. Takes what
 * `verify` takes and rejects with what it throws: `WebhookVerificationError`
 * for a request to refuse, `WebhookOptionsError` for a malformed secret or
 * options.
 * @example
 * ```ts
 * import { verifyAsync } from 'svc-webhooks';
 *
 * export default {
 *   async fetch(request: Request, env: { WEBHOOK_SECRET: string }): Promise<Response> {
 *     const event = await verifyAsync(await request.text(), request.headers, env.WEBHOOK_SECRET);
 *     console.log(event.type);
 *     return new Response(null, { status: 204 });
 *   },
 * };
 * ```
 */
export async function verifyAsync(
  payload: WebhookPayload,
  headers: WebhookHeaders,
  secret: WebhookSecret,
  options?: VerifyOptions,
): Promise<WebhookEvent> {
  return (await verifyOnThisRuntime(payload, headers, cachedKeys(secret), resolveVerifyOptions(options))).event;
}
