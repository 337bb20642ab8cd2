/**
 * The h3 entry on an h3 2 app answered through `app.fetch`: the Web request
 * each runtime hands h3, with `on` and with a handler.
 */
import { H3 } from 'h3';
import { MemoryDedupStore, sign } from 'svc-webhooks';
import { verifyWebhook } from 'svc-webhooks/h3';
import { assertEqual, type ConformanceCase } from '../harness.js';

const SECRET = 'whsec_aDMtc2VjcmV0LWZvci1jb25mb3JtYW5jZS0wMQ==';
const ID = 'msg_h3_1';
const BODY = JSON.stringify({ id: ID, type: 'call.missed', data: { object: { id: 'call_1' } } });

function request(secret: string, body = BODY): Request {
  const headers = sign(body, { id: ID, timestamp: new Date(), secret });
  return new Request('http://receiver.test/webhooks', { method: 'POST', body, headers: { ...headers, 'content-type': 'application/json' } });
}

async function answer(response: Response): Promise<[number, unknown]> {
  const text = await response.text();
  return [response.status, text === '' ? undefined : JSON.parse(text)];
}

export const cases: readonly ConformanceCase[] = [
  {
    name: 'h3 adapter: a signed body reaches the handler, which sees it on event.context.webhook',
    run: async () => {
      const app = new H3().post(
        '/webhooks',
        verifyWebhook({ secret: SECRET }, (event, { request }) => Response.json({ received: event.type, id: request.context.webhook?.id })),
      );
      assertEqual(await answer(await app.fetch(request(SECRET))), [200, { received: 'call.missed', id: ID }], 'answer');
    },
  },
  {
    name: 'h3 adapter: a wrong signature answers 400 invalid_signature, running nothing',
    run: async () => {
      const handled: string[] = [];
      const app = new H3().post('/webhooks', verifyWebhook({ secret: SECRET, on: { 'call.missed': (_event, { id }) => void handled.push(id) } }));
      const [status, body] = await answer(await app.fetch(request('whsec_d3Jvbmc=')));
      assertEqual([status, (body as { error: { code: string } }).error.code, handled.length], [400, 'invalid_signature', 0], 'answer');
    },
  },
  {
    name: 'h3 adapter: with on and MemoryDedupStore, a repeated delivery runs its handler once',
    run: async () => {
      const dedup = new MemoryDedupStore();
      const handled: string[] = [];
      const app = new H3().post('/webhooks', verifyWebhook({ secret: SECRET, dedup: { store: dedup }, on: { 'call.missed': (_event, { id }) => void handled.push(id) } }));
      try {
        assertEqual((await app.fetch(request(SECRET))).status, 204, 'first');
        assertEqual((await app.fetch(request(SECRET))).status, 200, 'repeat');
        assertEqual(handled, [ID], 'handled');
      } finally {
        dedup.close();
      }
    },
  },
];
