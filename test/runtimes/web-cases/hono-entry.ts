/**
 * The Hono entry on every runtime, those without node:crypto too: a receiver
 * and its MemoryDedupStore created when the module loads (a Worker's global
 * scope), answering a signed delivery, its repeat, and tampered and stale
 * ones. Requests are signed with Web Crypto (web-sign.ts).
 */
import { Hono } from 'hono';
import { MemoryDedupStore } from 'svc-webhooks';
import { verifyWebhook } from 'svc-webhooks/hono';
import { assertEqual, type ConformanceCase } from '../harness.js';
import { nowSeconds, webSign } from '../web-sign.js';

const SECRET = 'whsec_aG9uby1lbnRyeS13ZWItY3J5cHRvLXNlY3JldA==';
const ID = 'msg_hono_web_1';
const BODY = JSON.stringify({ id: ID, type: 'call.missed', data: { object: { id: 'call_1' } } });

const routed: string[] = [];
const app = new Hono().post('/webhooks', verifyWebhook({ secret: SECRET, dedup: { store: new MemoryDedupStore() } }), (c) => {
  routed.push(c.var.webhook.id);
  return c.json({ received: c.var.webhook.event.type });
});

async function answer(body: string, headers: Record<string, string>): Promise<[number, unknown]> {
  const response = await app.request('/webhooks', { method: 'POST', body, headers: { ...headers, 'content-type': 'application/json' } });
  const json = (await response.json()) as { error?: { code: string } };
  return [response.status, json.error?.code ?? json];
}

export const cases: readonly ConformanceCase[] = [
  {
    name: 'hono entry (Web Crypto), made at module scope: signed once, its repeat a duplicate, tampered and stale refused',
    run: async () => {
      const signed = await webSign(BODY, ID, nowSeconds(), SECRET);
      assertEqual(await answer(BODY, signed), [200, { received: 'call.missed' }], 'signed');
      assertEqual(await answer(BODY, signed), [200, { received: true, duplicate: true }], 'repeat');
      assertEqual(await answer(BODY.replace('call_1', 'call_2'), signed), [400, 'invalid_signature'], 'tampered');
      assertEqual(await answer(BODY, await webSign(BODY, ID, nowSeconds() - 600, SECRET)), [400, 'timestamp_too_old'], 'stale');
      assertEqual(routed, [ID], 'routed');
    },
  },
];
