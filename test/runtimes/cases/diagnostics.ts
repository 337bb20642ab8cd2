/**
 * The delivery tracing channel on each runtime: where node:diagnostics_channel
 * has tracing channels that tell whether anyone listens (Node, and each other
 * runtime that has them), the Fetch entry traces each request on it while
 * someone listens, its context filled in by the answer; elsewhere it publishes
 * nothing and throws nothing.
 */
import * as diagnostics from 'node:diagnostics_channel';
import { DELIVERY_CHANNEL, sign, type DeliveryTrace } from 'svc-webhooks';
import { verifyWebhook } from 'svc-webhooks/fetch';
import { assertEqual, type ConformanceCase } from '../harness.js';

const SECRET = 'whsec_ZGlhZ25vc3RpY3MtY2hhbm5lbC1jb25mb3JtYW5jZQ==';

export const cases: readonly ConformanceCase[] = [
  {
    name: 'diagnostics: the Fetch entry traces each request on the delivery channel, with its outcome',
    run: async () => {
      const channel = typeof diagnostics.tracingChannel === 'function' ? diagnostics.tracingChannel(DELIVERY_CHANNEL) : undefined;
      const traced = channel !== undefined && typeof channel.hasSubscribers === 'boolean';
      const heard: DeliveryTrace[] = [];
      const none = (): void => undefined;
      const handlers = { start: none, end: none, asyncStart: none, asyncEnd: (trace: unknown) => void heard.push({ ...(trace as DeliveryTrace) }), error: none };
      channel?.subscribe(handlers);
      try {
        const handler = verifyWebhook({ secret: SECRET, dedup: false }, () => undefined);
        const body = JSON.stringify({ id: 'msg_diag_1', type: 'webhook.test', data: { object: { id: 'we_1' } } });
        const headers = sign(body, { id: 'msg_diag_1', timestamp: new Date(), secret: SECRET });
        const answers = [
          await handler(new Request('http://receiver.test/webhooks', { method: 'POST', body, headers })),
          await handler(new Request('http://receiver.test/webhooks', { method: 'POST', body: `${body} `, headers })),
        ];
        assertEqual(
          answers.map(({ status }) => status),
          [204, 400],
          'answers',
        );
        assertEqual(
          heard.map(({ entry, status, outcome, delivery }) => [entry, status, outcome, delivery?.id ?? null, delivery?.keyId ?? null]),
          traced
            ? [
                ['fetch', 204, 'processed', 'msg_diag_1', '0'],
                ['fetch', 400, 'invalid_signature', null, null],
              ]
            : [],
          'delivery traces',
        );
      } finally {
        channel?.unsubscribe(handlers);
      }
    },
  },
];
