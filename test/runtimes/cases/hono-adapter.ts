/**
 * The Hono adapter answered through `app.request()` and `app.fetch`: the
 * body and headers a Worker really gets.
 */
import { Hono } from 'hono';
import { MemoryDedupStore, sign, type DedupStore } from 'svc-webhooks';
import { verifyWebhook } from 'svc-webhooks/hono';
import { assertEqual, type ConformanceCase } from '../harness.js';

const SECRET = 'whsec_c2Vjb25kLXNlY3JldC1mb3ItY29uZm9ybWFuY2U=';
const ID = 'msg_hono_1';
const BODY = JSON.stringify({ id: ID, type: 'call.missed', data: { object: { id: 'call_1' } } });

function receiver(dedup?: DedupStore): Hono {
  return new Hono().post('/webhooks', verifyWebhook({ secret: SECRET, dedup: { store: dedup } }), (c) => c.json({ received: c.var.webhook.event.type }));
}

function request(secret: string, body = BODY): RequestInit {
  const headers = sign(body, { id: ID, timestamp: new Date(), secret });
  return { method: 'POST', body, headers: { ...headers, 'content-type': 'application/json' } };
}

async function answer(response: Response): Promise<[number, unknown]> {
  return [response.status, await response.json()];
}

export const cases: readonly ConformanceCase[] = [
  {
    name: 'hono adapter: app.request with a signed body reaches the route',
    run: async () => assertEqual(await answer(await receiver().request('/webhooks', request(SECRET))), [200, { received: 'call.missed' }], 'answer'),
  },
  {
    name: 'hono adapter: app.fetch with a wrong signature answers 400',
    run: async () => {
      const response = await receiver().fetch(new Request('http://receiver.test/webhooks', request('whsec_d3Jvbmc=')));
      assertEqual(await answer(response), [400, { error: { code: 'invalid_signature', message: 'no v1 signature in webhook-signature matches the secret' } }], 'answer');
    },
  },
  {
    name: 'hono adapter: unsigned request answers 400 missing_header',
    run: async () => {
      const [status, body] = await answer(await receiver().request('/webhooks', { method: 'POST', body: BODY }));
      assertEqual([status, (body as { error: { code: string } }).error.code], [400, 'missing_header'], 'answer');
    },
  },
  {
    name: 'hono adapter: a repeated delivery is answered as a duplicate with MemoryDedupStore',
    run: async () => {
      const dedup = new MemoryDedupStore();
      const app = receiver(dedup);
      try {
        assertEqual(await answer(await app.request('/webhooks', request(SECRET))), [200, { received: 'call.missed' }], 'first');
        assertEqual(await answer(await app.request('/webhooks', request(SECRET))), [200, { received: true, duplicate: true }], 'repeat');
      } finally {
        dedup.close();
      }
    },
  },
];
