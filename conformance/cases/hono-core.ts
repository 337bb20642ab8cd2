/**
 * A Hono app that verifies with the core on the raw request, answered through
 * `app.request()` and `app.fetch`: the body and headers a Worker really gets.
 */
import { Hono } from 'hono';
import { sign, verify, WebhookVerificationError } from 'svc-webhooks';
import { assertEqual, type ConformanceCase } from '../harness.js';

const SECRET = 'whsec_c2Vjb25kLXNlY3JldC1mb3ItY29uZm9ybWFuY2U=';
const ID = 'msg_hono_1';
const BODY = JSON.stringify({ id: ID, type: 'call.missed', data: { object: { id: 'call_1' } } });

const app = new Hono().post('/webhooks', async (c) => {
  try {
    const event = verify(await c.req.arrayBuffer(), c.req.raw.headers, SECRET);
    return c.json({ received: event.type });
  } catch (error) {
    if (!(error instanceof WebhookVerificationError)) throw error;
    return c.json({ error: error.code }, error.status as 400);
  }
});

function request(secret: string, body = BODY): RequestInit {
  const headers = sign(body, { id: ID, timestamp: new Date(), secret });
  return { method: 'POST', body, headers: { ...headers, 'content-type': 'application/json' } };
}

async function answer(response: Response): Promise<[number, unknown]> {
  return [response.status, await response.json()];
}

export const cases: readonly ConformanceCase[] = [
  {
    name: 'hono+core: app.request with a signed body answers 200',
    run: async () => assertEqual(await answer(await app.request('/webhooks', request(SECRET))), [200, { received: 'call.missed' }], 'answer'),
  },
  {
    name: 'hono+core: app.fetch with a wrong signature answers 400',
    run: async () => {
      const response = await app.fetch(new Request('http://receiver.test/webhooks', request('whsec_d3Jvbmc=')));
      assertEqual(await answer(response), [400, { error: 'invalid_signature' }], 'answer');
    },
  },
  {
    name: 'hono+core: unsigned request answers 400 missing_header',
    run: async () => {
      const response = await app.request('/webhooks', { method: 'POST', body: BODY });
      assertEqual(await answer(response), [400, { error: 'missing_header' }], 'answer');
    },
  },
];
