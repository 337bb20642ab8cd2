/**
 * A `MemoryDedupStore` and a receiver created when the module loads, as a
 * Worker creates them in its global scope, where workerd refuses timers
 * ("Disallowed operation called within global scope"): the Worker must
 * start, then answer a delivery and its duplicate.
 */
import { Hono } from 'hono';
import { MemoryDedupStore, sign } from 'svc-webhooks';
import { verifyWebhook } from 'svc-webhooks/hono';
import { assertEqual, type ConformanceCase } from '../harness.js';

const SECRET = 'whsec_bW9kdWxlLXNjb3BlLXN0b3JlLXNlY3JldA==';
const BODY = JSON.stringify({ id: 'msg_module_1', type: 'call.missed', data: { object: { id: 'call_1' } } });

const explicitStore = new Hono().post('/webhooks', verifyWebhook({ secret: SECRET, dedup: { store: new MemoryDedupStore() } }), (c) => c.body(null, 204));
// No dedup option: the receiver makes a MemoryDedupStore of its own, here at module scope too.
const defaultStore = new Hono().post('/webhooks', verifyWebhook({ secret: SECRET }), (c) => c.body(null, 204));

async function deliverTwice(app: Hono): Promise<unknown[]> {
  const request = (): RequestInit => ({ method: 'POST', body: BODY, headers: { ...sign(BODY, { id: 'msg_module_1', timestamp: new Date(), secret: SECRET }) } });
  const first = await app.request('/webhooks', request());
  const repeat = await app.request('/webhooks', request());
  return [first.status, repeat.status, await repeat.json()];
}

export const cases: readonly ConformanceCase[] = [
  {
    name: 'module scope: a MemoryDedupStore created at load answers a delivery, then its duplicate',
    run: async () => assertEqual(await deliverTwice(explicitStore), [204, 200, { received: true, duplicate: true }], 'answers'),
  },
  {
    name: 'module scope: a receiver with no dedup option deduplicates with its own store',
    run: async () => assertEqual(await deliverTwice(defaultStore), [204, 200, { received: true, duplicate: true }], 'answers'),
  },
];
