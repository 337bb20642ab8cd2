/**
 * The delivery channel on each runtime: node:diagnostics_channel is there
 * (Node, Bun, Deno, workerd with nodejs_compat), and the Fetch entry
 * publishes one message per request on it while someone listens.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { DELIVERY_CHANNEL, sign, type DeliveryMessage } from 'svc-webhooks';
import { verifyWebhook } from 'svc-webhooks/fetch';
import { assertEqual, type ConformanceCase } from '../harness.js';

const SECRET = 'whsec_ZGlhZ25vc3RpY3MtY2hhbm5lbC1jb25mb3JtYW5jZQ==';

export const cases: readonly ConformanceCase[] = [
  {
    name: 'diagnostics: the Fetch entry publishes one delivery message per request, with its outcome',
    run: async () => {
      const heard: DeliveryMessage[] = [];
      const listener = (message: unknown): void => void heard.push(message as DeliveryMessage);
      subscribe(DELIVERY_CHANNEL, listener);
      try {
        const handler = verifyWebhook({ secret: SECRET, dedup: false }, () => undefined);
        const body = JSON.stringify({ id: 'msg_diag_1', type: 'webhook.test', data: { object: { id: 'we_1' } } });
        const headers = sign(body, { id: 'msg_diag_1', timestamp: new Date(), secret: SECRET });
        await handler(new Request('http://receiver.test/webhooks', { method: 'POST', body, headers }));
        await handler(new Request('http://receiver.test/webhooks', { method: 'POST', body: `${body} `, headers }));
        assertEqual(
          heard.map(({ entry, status, outcome, id, keyId }) => [entry, status, outcome, id ?? null, keyId ?? null]),
          [
            ['fetch', 204, 'processed', 'msg_diag_1', '0'],
            ['fetch', 400, 'invalid_signature', null, null],
          ],
          'delivery messages',
        );
      } finally {
        unsubscribe(DELIVERY_CHANNEL, listener);
      }
    },
  },
];
