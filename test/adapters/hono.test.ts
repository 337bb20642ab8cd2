import { createAdaptorServer } from '@hono/node-server';
import type { Server } from 'node:http';
import { Hono } from 'hono';
import { describe, expect, expectTypeOf, it, vi } from 'vitest';
import { verifyWebhook } from '../../adapters/hono.js';
import type { WebhookDelivery, WebhookEvent } from '../../src/index.js';
import {
  adapterContract,
  disconnectContract,
  CUSTOM_ERROR_STATUS,
  customErrorBody,
  RouteSpy,
  type AdapterHarness,
  type HarnessSpec,
} from '../helpers/adapter-contract.js';
import { orderingContract } from '../helpers/ordering-contract.js';
import { settleContract } from '../helpers/settle-contract.js';
import { closeServer, expect413WhileSending, fetchHarness, listen } from '../helpers/http-harness.js';
import { SECRET, now, signedRequest } from '../helpers/signed-request.js';
import { simulateDelivery, testEvent } from '../../src/testing/index.js';

function webhookApp({ options, route, customErrors }: HarnessSpec): Hono {
  const app = new Hono();
  app.onError((_error, c) => c.text('the route failed', 500));
  const onError = customErrors
    ? (error: { code: Parameters<typeof customErrorBody>[0] }) => Response.json(customErrorBody(error.code), { status: CUSTOM_ERROR_STATUS })
    : undefined;
  app.post('/webhooks', verifyWebhook({ ...options, onError }), async (c) => {
    expectTypeOf(c.var.webhook).toEqualTypeOf<WebhookDelivery>();
    expectTypeOf(c.get('webhook').event).toEqualTypeOf<WebhookEvent>();
    expectTypeOf(c.get('webhook').id).toEqualTypeOf<string>();
    return c.body(null, (await route.handle(c.var.webhook.event, c.var.webhook.id, c.var.webhook.stale)) as 204);
  });
  return app;
}

/** Sends through `app.request()`: no socket, Hono's own request path. */
function inProcessHarness(app: Hono): AdapterHarness {
  return {
    post: async ({ body, headers }) => app.request('/webhooks', { method: 'POST', body, headers }),
    close: async () => {},
  };
}

async function nodeServerHarness(app: Hono): Promise<AdapterHarness> {
  const server = createAdaptorServer({ fetch: app.fetch }) as Server;
  return fetchHarness(await listen(server), () => closeServer(server));
}

describe('hono adapter through app.request()', () => {
  adapterContract(async (spec) => inProcessHarness(webhookApp(spec)));
  orderingContract(async (spec) => inProcessHarness(webhookApp(spec)));

  it('leaves the body cached for the route to read again', async () => {
    const app = new Hono();
    app.post('/webhooks', verifyWebhook({ secret: SECRET, now }), async (c) => c.json({ reread: await c.req.json() }));
    const { body, headers } = signedRequest();
    const response = await app.request('/webhooks', { method: 'POST', body, headers });
    expect(await response.json()).toEqual({ reread: JSON.parse(body) });
  });

  it("verifies the body a middleware before it read, from Hono's cache", async () => {
    const app = new Hono<{ Variables: { peeked: string } }>();
    app.use('/webhooks', async (c, next) => {
      c.set('peeked', `peeked ${((await c.req.json()) as { id: string }).id}`);
      await next();
    });
    app.post('/webhooks', verifyWebhook({ secret: SECRET, now, dedup: false }), async (c) =>
      c.json({ reread: await c.req.text(), peeked: c.var.peeked, id: c.var.webhook.id }),
    );
    const { body, headers } = signedRequest();
    const response = await app.request('/webhooks', { method: 'POST', body, headers });
    expect([response.status, await response.json()]).toEqual([200, { reread: body, peeked: 'peeked evt_1', id: 'evt_1' }]);
  });

  it.each([
    ['inside', 'xxxxx', 'yyyyy'],
    ['at the start of', '', 'yyyyy'],
  ])('leaves the exact bytes cached when the body arrived as a view %s a larger buffer', async (_where, before, after) => {
    const app = new Hono();
    app.post('/webhooks', verifyWebhook({ secret: SECRET, now, dedup: false }), async (c) => c.json({ reread: await c.req.text() }));
    const { body, headers } = signedRequest();
    const pooled = Buffer.from(`${before}${body}${after}`);
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(pooled.subarray(before.length, before.length + Buffer.byteLength(body)));
        controller.close();
      },
    });
    const response = await app.request('/webhooks', { method: 'POST', body: stream, headers, duplex: 'half' } as RequestInit);
    expect([response.status, await response.json()]).toEqual([200, { reread: body }]);
  });

  it("names Hono's own readers when the raw request body was read before it", async () => {
    const app = new Hono();
    app.post(
      '/webhooks',
      async (c, next) => {
        await c.req.raw.text();
        await next();
      },
      verifyWebhook({ secret: SECRET, now, dedup: false }),
      (c) => c.body(null, 204),
    );
    const { body, headers } = signedRequest();
    const response = await app.request('/webhooks', { method: 'POST', body, headers });
    expect([response.status, await response.json()]).toEqual([
      500,
      {
        error: {
          code: 'body_already_parsed',
          message:
            'the request body was read before verifyWebhook, outside Hono (c.req.raw); read it with c.req.arrayBuffer(), c.req.text() or c.req.json() instead, which keep it',
        },
      },
    ]);
  });

  it('runs the route once for two copies delivered as the service delivers them, through app.request', async () => {
    const seen: string[] = [];
    const app = new Hono().post('/webhooks', verifyWebhook({ secret: SECRET }), async (c) => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      seen.push(c.var.webhook.id);
      return c.body(null, 204);
    });
    const event = testEvent('message.received');
    const pause = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 30));
    const result = await simulateDelivery((request) => app.request(request), event, { secret: SECRET, copies: 2, sleep: pause });
    expect(result.delivered).toBe(true);
    expect(seen).toEqual([event.id]);
  });

  it('leaves JSON parsing of other routes in the same app alone', async () => {
    const route = new RouteSpy();
    const app = webhookApp({ options: { secret: SECRET, now }, route });
    app.post('/orders', async (c) => c.json({ echoed: await c.req.json() }));
    const order = await app.request('/orders', {
      method: 'POST',
      body: JSON.stringify({ sku: 'A1' }),
      headers: { 'content-type': 'application/json' },
    });
    expect(await order.json()).toEqual({ echoed: { sku: 'A1' } });
    expect((await inProcessHarness(app).post(signedRequest())).status).toBe(204);
  });
});

describe('hono adapter over HTTP with @hono/node-server', () => {
  adapterContract((spec) => nodeServerHarness(webhookApp(spec)));
  disconnectContract((spec) => nodeServerHarness(webhookApp(spec)));
  settleContract((spec) => nodeServerHarness(webhookApp(spec)));

  it('answers 413 while a chunked body past the limit is still being sent', async () => {
    const route = new RouteSpy();
    const server = createAdaptorServer({ fetch: webhookApp({ options: { secret: SECRET, now, maxPayloadBytes: 64 * 1024 }, route }).fetch }) as Server;
    try {
      await expect413WhileSending(`${await listen(server)}/webhooks`, signedRequest().headers);
      expect(route.calls).toEqual([]);
    } finally {
      await closeServer(server);
    }
  });
});

describe('hono adapter past the shared contract', () => {
  it('gives the default answer, and logs why, when onError returns no Response', async () => {
    const log = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      const app = new Hono().post('/webhooks', verifyWebhook({ secret: SECRET, now, onError: (() => ({ status: 418 })) as never }), (c) => c.body(null, 204));
      const { body, headers } = signedRequest({ secret: SECRET.replace('w', 'W') });
      const response = await app.request('/webhooks', { method: 'POST', body, headers });
      expect([response.status, ((await response.json()) as { error: { code: string } }).error.code]).toEqual([400, 'invalid_signature']);
      // The refusal's line, then onError's.
      expect(log).toHaveBeenCalledTimes(2);
      expect(log.mock.calls[1]!.join(' ')).toMatch(/^svc-webhooks: onError failed \(it must answer a Response\)/);
    } finally {
      log.mockRestore();
    }
  });
});

describe('hono adapter options', () => {
  it('throws TypeError at creation for an onError that is no function', () => {
    expect(() => verifyWebhook({ secret: SECRET, onError: 'log' as never })).toThrow(TypeError);
  });
});
