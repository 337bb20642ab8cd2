/**
 * The Fetch entry on every runtime, those without node:crypto too, served by
 * the runtime's own server: a signed delivery reaches the handler once, its
 * repeat is a duplicate (MemoryDedupStore), tampered and stale ones are
 * refused. Requests are signed with Web Crypto (web-sign.ts).
 */
import { MemoryDedupStore, type WebhookEvent } from 'svc-webhooks';
import { verifyWebhook } from 'svc-webhooks/fetch';
import { assertEqual, type ConformanceCase } from '../harness.js';
import { serveFetch } from '../serve.js';
import { nowSeconds, webSign } from '../web-sign.js';

const SECRET = 'whsec_ZmV0Y2gtZW50cnktd2ViLWNyeXB0by1zZWNyZXQ=';
const ID = 'msg_fetch_web_1';
const BODY = JSON.stringify({ id: ID, type: 'message.received', data: { object: { id: 'txt_1', text: 'hé ✓' } } });

function post(body: string, headers: Record<string, string>): RequestInit {
  return { method: 'POST', body, headers: { ...headers, 'content-type': 'application/json' } };
}

async function answerOf(response: Response): Promise<[number, unknown]> {
  const text = await response.text();
  return [response.status, text === '' ? '' : (JSON.parse(text) as { error?: { code: string } }).error?.code ?? JSON.parse(text)];
}

function failWith(message: string): never {
  throw new Error(message);
}

export const cases: readonly ConformanceCase[] = [
  {
    name: 'fetch entry (Web Crypto): signed once, its repeat a duplicate, tampered and stale refused; the handler runs once',
    run: async () => {
      const calls: WebhookEvent[] = [];
      const dedup = new MemoryDedupStore();
      const served = await serveFetch(verifyWebhook({ secret: SECRET, dedup: { store: dedup } }, (event) => void calls.push(event)));
      try {
        const signed = await webSign(BODY, ID, nowSeconds(), SECRET);
        assertEqual(await answerOf(await served.fetch('/webhooks', post(BODY, signed))), [204, ''], 'signed');
        assertEqual(await answerOf(await served.fetch('/webhooks', post(BODY, signed))), [200, { received: true, duplicate: true }], 'repeat');
        assertEqual(await answerOf(await served.fetch('/webhooks', post(BODY.replace('txt_1', 'txt_2'), signed))), [400, 'invalid_signature'], 'tampered');
        const stale = await webSign(BODY, ID, nowSeconds() - 600, SECRET);
        assertEqual(await answerOf(await served.fetch('/webhooks', post(BODY, stale))), [400, 'timestamp_too_old'], 'stale');
        assertEqual(await answerOf(await served.fetch('/webhooks', { method: 'POST', body: BODY })), [400, 'missing_header'], 'unsigned');
        assertEqual(calls, [JSON.parse(BODY)], 'handler calls');
      } finally {
        await served.close();
        dedup.close();
      }
    },
  },
  {
    name: 'fetch entry (Web Crypto) with on and rotated secrets: the second secret verifies, a throwing handler answers 500 until its retry',
    run: async () => {
      const OLD = 'whsec_b2xkLWZldGNoLWVudHJ5LXNlY3JldC0wMQ==';
      const handled: string[] = [];
      // The first run fails; its retry runs again.
      const on = { 'message.received': (event: WebhookEvent) => void (handled.push(event.id) === 1 && failWith('secret detail')) };
      const served = await serveFetch(verifyWebhook({ secret: [OLD, SECRET], on, onHandlerError: () => undefined }));
      try {
        const signed = await webSign(BODY, ID, nowSeconds(), SECRET);
        assertEqual(await answerOf(await served.fetch('/webhooks', post(BODY, signed))), [500, 'handler_failed'], 'failure');
        assertEqual(await answerOf(await served.fetch('/webhooks', post(BODY, signed))), [204, ''], 'retry');
        assertEqual(await answerOf(await served.fetch('/webhooks', post(BODY, signed))), [200, { received: true, duplicate: true }], 'repeat');
        assertEqual(handled, [ID, ID], 'handled');
      } finally {
        await served.close();
      }
    },
  },
];
