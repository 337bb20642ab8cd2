/**
 * A receiver where the runtime hands out no node:crypto (Vercel Edge, a
 * Worker without nodejs_compat), as the web build runs there: its bytes and
 * HMAC module is runtime-crypto.web.ts, loaded without
 * `process.getBuiltinModule`. The Fetch and Hono entries then verify with
 * Web Crypto, giving the deliveries, dedup keys and refusals they give on
 * Node, importing each secret's key once; the synchronous API is refused.
 * Requests are signed here with node:crypto alone.
 */
import { createHmac } from 'node:crypto';
import { Hono } from 'hono';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { verifyWebhook } from '../../adapters/fetch.js';
import { verifyWebhook as honoWebhook } from '../../adapters/hono.js';
import { sign, verify, verifyAsync, WebhookOptionsError, type WebhookDelivery } from '../../src/index.js';
import { deliveryOf, envelope, keyMaterialOf, NOW_SECONDS, now, OLD_SECRET, SECRET } from '../helpers/signed-request.js';

vi.mock('../../src/core/runtime-crypto.js', async () => {
  const { getBuiltinModule } = process;
  Object.assign(process, { getBuiltinModule: undefined });
  try {
    return await import('../../src/core/runtime-crypto.web.js');
  } finally {
    Object.assign(process, { getBuiltinModule });
  }
});

const importKey = vi.spyOn(crypto.subtle, 'importKey');
afterEach(() => importKey.mockClear());

/** A POST of `id`'s envelope signed with `secret` at `timestamp`, the body then replaced by `body` if given. */
function signedPost(id: string, { secret = SECRET, timestamp = NOW_SECONDS, body }: { secret?: string; timestamp?: number; body?: string } = {}): RequestInit {
  const signed = envelope(id, 'call.missed');
  const digest = createHmac('sha256', keyMaterialOf(secret).key).update(`${id}.${timestamp}.${signed}`).digest('base64');
  return { method: 'POST', body: body ?? signed, headers: { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': `v1,${digest}` } };
}

/** The delivery the Fetch entry's context holds, without the request. */
function deliveryIn({ event, id, timestamp, keyId, dedupKey, tenant }: WebhookDelivery): WebhookDelivery {
  return tenant === undefined ? { event, id, timestamp, keyId, dedupKey } : { event, id, timestamp, keyId, tenant, dedupKey };
}

async function answerOf(response: Response): Promise<[number, unknown]> {
  const text = await response.text();
  return [response.status, text === '' ? '' : (JSON.parse(text) as { error?: { code: string } }).error?.code ?? JSON.parse(text)];
}

describe('the receiver where only Web Crypto exists', () => {
  it('Fetch entry: the delivery and dedup key Node gives, a repeat answered duplicate; tampered and stale refused', async () => {
    const deliveries: WebhookDelivery[] = [];
    const handler = verifyWebhook({ secret: [OLD_SECRET, SECRET], now }, (_event, context) => void deliveries.push(deliveryIn(context)));
    const post = (init: RequestInit) => handler(new Request('http://receiver.test/webhooks', init)).then(answerOf);
    expect(await post(signedPost('evt_1'))).toEqual([204, '']);
    expect(await post(signedPost('evt_1'))).toEqual([200, { received: true, duplicate: true }]);
    expect(await post(signedPost('evt_1', { body: envelope('evt_1', 'call.missed').replace('obj_', 'obj-') }))).toEqual([400, 'invalid_signature']);
    expect(await post(signedPost('evt_2', { timestamp: NOW_SECONDS - 600 }))).toEqual([400, 'timestamp_too_old']);
    expect(deliveries).toEqual([deliveryOf({ id: 'evt_1', keyId: '1' })]);
  });

  it('Fetch entry with tenants: the tenant looked up, then its secret verified with Web Crypto', async () => {
    const handler = verifyWebhook(
      { tenants: { of: (request) => new URL(request.url).searchParams.get('tenant'), secret: async (tenant) => (tenant === 'acme' ? SECRET : null) }, now },
      (_event, context) => Response.json(deliveryIn(context)),
    );
    const post = (tenant: string) => handler(new Request(`http://receiver.test/webhooks?tenant=${tenant}`, signedPost('evt_3'))).then(answerOf);
    expect(await post('acme')).toEqual([200, deliveryOf({ id: 'evt_3', tenant: 'acme' })]);
    expect(await post('other')).toEqual([404, 'unknown_tenant']);
  });

  it('Hono entry built per request (the idiom for c.env secrets): the secret\'s key is imported into Web Crypto once', async () => {
    const secret = `whsec_${Buffer.from('a secret of its own for this test').toString('base64')}`;
    const app = new Hono().post('/webhooks', (c, next) => honoWebhook({ secret, now, dedup: false })(c, next), (c) => c.json({ id: c.var.webhook.id }));
    for (const id of ['evt_a', 'evt_b', 'evt_c']) {
      expect(await answerOf(await app.request('/webhooks', signedPost(id, { secret })))).toEqual([200, { id }]);
    }
    expect(await answerOf(await app.request('/webhooks', signedPost('evt_d')))).toEqual([400, 'invalid_signature']);
    expect(importKey).toHaveBeenCalledTimes(1);
  });

  it('verifyAsync verifies; verify and sign throw a WebhookOptionsError naming verifyAsync and the entries', async () => {
    const { body, headers } = signedPost('evt_4') as { body: string; headers: Record<string, string> };
    await expect(verifyAsync(body, headers, SECRET, { now })).resolves.toEqual(JSON.parse(body));
    await expect(verifyAsync(body, headers, 'whsec_***', { now })).rejects.toBeInstanceOf(WebhookOptionsError);
    for (const call of [() => verify(body, headers, SECRET, { now }), () => sign(body, { id: 'evt_4', timestamp: NOW_SECONDS, secret: SECRET })]) {
      expect(call).toThrow(WebhookOptionsError);
      expect(call).toThrow(/verifyAsync\(\).*svc-webhooks\/fetch.*svc-webhooks\/hono/);
    }
  });
});
