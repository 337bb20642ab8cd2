/**
 * svc-webhooks/cloudflare and svc-webhooks/d1 load on every runtime, those
 * without node: modules too: a delivery enqueue sent, given twice to
 * work()'s queue handler, runs its handler once, both messages acked; a
 * D1DedupStore is made on a binding's shape and refuses anything else.
 */
import { MemoryDedupStore, WebhookOptionsError, type WebhookDelivery } from 'svc-webhooks';
import { enqueue, work, type QueueMessage } from 'svc-webhooks/cloudflare';
import { D1DedupStore, type D1Database } from 'svc-webhooks/d1';
import { assertEqual, thrown, type ConformanceCase } from '../harness.js';

const event = { id: 'msg_cf_1', type: 'call.missed', data: { object: { id: 'call_1' } } };
const delivery = { event, id: event.id, timestamp: 1_700_000_000, keyId: '0', dedupKey: `AAAAAAAAAAAAAAAA:${event.id}` } as unknown as WebhookDelivery;

/** A message of `body` whose ack and retry are recorded in `settled`. */
function message(id: string, body: unknown, settled: string[]): QueueMessage {
  return { id, body, ack: () => void settled.push(`${id} ack`), retry: () => void settled.push(`${id} retry`) };
}

export const cases: readonly ConformanceCase[] = [
  {
    name: 'cloudflare: a delivery enqueue sent runs once through work(), its copy acked as a duplicate',
    run: async () => {
      const sent: unknown[] = [];
      await enqueue({ send: async (body) => void sent.push(JSON.parse(JSON.stringify(body))) }).hand(delivery);
      assertEqual(sent, [{ delivery }], 'sent');
      const runs: string[] = [];
      const store = new MemoryDedupStore();
      try {
        const handle = work({ on: { 'call.missed': (missed) => void runs.push(missed.id) }, dedup: { store: () => store } });
        const settled: string[] = [];
        await handle({ queue: 'webhooks', messages: [message('m1', sent[0], settled)] }, {});
        await handle({ queue: 'webhooks', messages: [message('m2', sent[0], settled)] }, {});
        assertEqual([runs, settled], [[event.id], ['m1 ack', 'm2 ack']], 'runs and settled');
      } finally {
        store.close();
      }
    },
  },
  {
    name: 'd1: D1DedupStore takes a binding of D1 shape, and refuses anything else',
    run: () => {
      const binding = { prepare: () => undefined, batch: async () => [] } as unknown as D1Database;
      assertEqual(new D1DedupStore(binding, { table: 'webhooks_dedup' }) instanceof D1DedupStore, true, 'made');
      assertEqual(thrown(() => new D1DedupStore({} as D1Database), 'no binding') instanceof WebhookOptionsError, true, 'refused');
    },
  },
];
