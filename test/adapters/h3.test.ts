/**
 * The h3 entry on h3 1 and h3 2, over HTTP behind Node's server: the shared
 * adapter contract and the sender hanging up, on each major; and what is
 * h3's own: the handler's context and `event.context.webhook`, the tenant from
 * the router's params, the bytes h3 1 kept from a `readRawBody` before the
 * entry, h3 1's Web request on a Web host, a body h3 2's request gave away
 * before refused, a body broken off, and the settling handed to the event's
 * `waitUntil`, or settled without one.
 */
import { H3, mockEvent, readRawBody as readRawBodyV2, getRouterParam, toNodeHandler, type H3Event } from 'h3';
import {
  createApp,
  createRouter,
  fromNodeMiddleware,
  getRouterParam as getRouterParamV1,
  readBody as readBodyV1,
  readRawBody as readRawBodyV1,
  toNodeListener,
  toWebHandler,
} from 'h3-v1';
import express from 'express';
import { createServer } from 'node:http';
import { describe, expect, expectTypeOf, it, vi } from 'vitest';
import { verifyWebhook, type H3Webhook, type H3WebhookContext, type H3WebhookOptions } from '../../adapters/h3.js';
import type { WebhookDelivery, WebhookEvent } from '../../src/index.js';
import { adapterContract, CUSTOM_ERROR_STATUS, customErrorBody, disconnectContract, type AdapterHarness, type HarnessSpec } from '../helpers/adapter-contract.js';
import { orderingContract } from '../helpers/ordering-contract.js';
import { H3_MAJORS, serveH3, type H3Major } from '../helpers/adapter-servers.js';
import { creationMistakes, expectAnswerAfterSettling, heldStore, isSettled } from '../helpers/handler-adapter.js';
import { expectOptionMistake } from '../helpers/option-mistake.js';
import { fetchHarness, serveNode } from '../helpers/http-harness.js';
import { refusalOf } from '../helpers/refusal.js';
import { deliveryOf, keyOf, now, resentAsUtf16le, SECRET, signedRequest, type SignedRequest } from '../helpers/signed-request.js';
import { recordingLogger } from '../helpers/recording-logger.js';
import { TestDedupStore } from '../helpers/test-dedup-store.js';

const options = { secret: SECRET, now } as const;

function webhookHandler({ options, route, customErrors }: HarnessSpec): H3Webhook {
  const onError: H3WebhookOptions['onError'] = customErrors ? (error) => Response.json(customErrorBody(error.code), { status: CUSTOM_ERROR_STATUS }) : undefined;
  // The contract's failing route throws on purpose: its report would only be noise here.
  return verifyWebhook({ onHandlerError: () => undefined, ...options, onError }, async (event, { id, stale }) => {
    expectTypeOf(event).toEqualTypeOf<WebhookEvent>();
    return new Response(null, { status: await route.handle(event, id, stale) });
  });
}

const harnessOn =
  (major: H3Major) =>
  async (spec: HarnessSpec): Promise<AdapterHarness> => {
    const { url, close } = await serveH3(webhookHandler(spec), major);
    return fetchHarness(url, close);
  };

const post = (url: string, { body, headers }: SignedRequest): Promise<Response> => fetch(url, { method: 'POST', body, headers });

describe.each(H3_MAJORS)('h3 entry on %s, over HTTP', (major) => {
  adapterContract(harnessOn(major));
  orderingContract(harnessOn(major));
  disconnectContract(harnessOn(major));

  it("hands the handler the event and its delivery with the h3 event and the event's context, whose webhook is the delivery; nothing returned answers 204", async () => {
    const seen: Array<[WebhookEvent, Omit<H3WebhookContext, 'request' | 'context'>, WebhookDelivery | undefined]> = [];
    const webhook = verifyWebhook(options, (event, { request, context, ...delivery }) => {
      // The context is the h3 event's own.
      if (context !== request.context) throw new Error('the context is not the h3 event\'s');
      seen.push([event, delivery, context.webhook]);
    });
    const { url, close } = await serveH3(webhook, major);
    try {
      const answer = await post(`${url}/webhooks`, signedRequest());
      expect([answer.status, await answer.text()]).toEqual([204, '']);
      expect(seen).toEqual([[JSON.parse(signedRequest().body), deliveryOf(), deliveryOf()]]);
    } finally {
      await close();
    }
  });

  it("sends the handler's Response as it is, and settles the claim by its status", async () => {
    const dedup = new TestDedupStore();
    const answers = [new Response('later', { status: 503 }), Response.json({ queued: true }, { status: 202, headers: { 'x-queue': 'q1' } })];
    const { url, close } = await serveH3(verifyWebhook({ ...options, dedup: { store: dedup } }, () => answers.shift()), major);
    try {
      const later = await post(`${url}/webhooks`, signedRequest());
      expect([later.status, await later.text()]).toEqual([503, 'later']);
      expect(dedup.stateOf(keyOf('evt_1'))).toBe('absent');
      const queued = await post(`${url}/webhooks`, signedRequest());
      expect([queued.status, queued.headers.get('x-queue'), await queued.json()]).toEqual([202, 'q1', { queued: true }]);
      expect(dedup.stateOf(keyOf('evt_1'))).toBe('done');
    } finally {
      await close();
    }
  });

  it('answers 500, naming what it must return, when the handler returns a value h3 would send but no Response', async () => {
    const onHandlerError = vi.fn();
    const { url, close } = await serveH3(verifyWebhook({ ...options, onHandlerError }, (() => ({ ok: true })) as never), major);
    try {
      const answer = await post(`${url}/webhooks`, signedRequest());
      expect([answer.status, ((await answer.json()) as { error: { code: string } }).error.code]).toEqual([500, 'handler_failed']);
      expect(String(onHandlerError.mock.calls[0]![0])).toContain('a Response or nothing');
    } finally {
      await close();
    }
  });

  it("reads the tenant from the router's params, verifying with that tenant's secret", async () => {
    const secretOf = (tenant: string): string => (tenant === 'acme' ? SECRET : SECRET.replace('w', 'W'));
    const tenants: Array<string | undefined> = [];
    const param = major === 'h3 2' ? getRouterParam : (getRouterParamV1 as unknown as typeof getRouterParam);
    const webhook = verifyWebhook({ tenants: { of: (event) => param(event, 'tenant'), secret: secretOf }, now }, (_event, { tenant }) => void tenants.push(tenant));
    const { url, close } = await serveH3(webhook, major);
    try {
      expect((await post(`${url}/webhooks/acme`, signedRequest())).status).toBe(204);
      expect((await post(`${url}/webhooks/globex`, signedRequest())).status).toBe(400);
      expect(tenants).toEqual(['acme']);
    } finally {
      await close();
    }
  });
});

describe('h3 entry on h3 1', () => {
  /** h3 1's app with `middleware` before the webhook route. */
  async function behind(middleware: (event: never) => Promise<void>, webhook: H3Webhook): Promise<{ url: string; close: () => Promise<void> }> {
    const app = createApp()
      .use(middleware as never)
      .use(createRouter().post('/webhooks', webhook as never));
    return serveNode(createServer(toNodeListener(app)));
  }

  it.each([
    ['readRawBody', (event: never) => readRawBodyV1(event, false)],
    ['readBody, which parses the JSON', (event: never) => readBodyV1(event)],
  ])('verifies the bytes h3 kept when a middleware before it read the body with %s', async (_name, read) => {
    const ids: string[] = [];
    const { url, close } = await behind(async (event) => void (await read(event)), verifyWebhook(options, (_event, { id }) => void ids.push(id)));
    try {
      expect((await post(`${url}/webhooks`, signedRequest())).status).toBe(204);
      const tampered = await post(`${url}/webhooks`, { ...signedRequest(), body: signedRequest().body.replace('evt_1', 'evt_2') });
      expect([tampered.status, ((await tampered.json()) as { error: { code: string } }).error.code]).toEqual([400, 'invalid_signature']);
      expect(ids).toEqual(['evt_1']);
    } finally {
      await close();
    }
  });

  it("refuses 400 body_decoded, running nothing, when a Node text parser before it decoded a signed body sent again as UTF-16LE, and verifies the UTF-8 text it kept", async () => {
    const ids: string[] = [];
    const text = fromNodeMiddleware(express.text()) as unknown as (event: never) => Promise<void>;
    const { url, close } = await behind(text, verifyWebhook(options, (_event, { id }) => void ids.push(id)));
    try {
      expect(await refusalOf(await fetch(`${url}/webhooks`, { method: 'POST', ...resentAsUtf16le(signedRequest()) }))).toEqual({ status: 400, code: 'body_decoded' });
      expect(ids).toEqual([]);
      const { body, headers } = signedRequest();
      expect((await post(`${url}/webhooks`, { body, headers: { ...headers, 'content-type': 'text/plain; charset=utf-8' } })).status).toBe(204);
      expect(ids).toEqual(['evt_1']);
    } finally {
      await close();
    }
  });

  it('settles the claim with no waitUntil to hand it to, and logs nothing for it', async () => {
    const dedup = new TestDedupStore();
    const { logger, lines } = recordingLogger();
    const { url, close } = await serveH3(verifyWebhook({ ...options, dedup: { store: dedup }, logger }, () => undefined), 'h3 1');
    try {
      expect((await post(`${url}/webhooks`, signedRequest())).status).toBe(204);
      expect(dedup.stateOf(keyOf('evt_1'))).toBe('done');
      expect(lines).toEqual([]);
    } finally {
      await close();
    }
  });

  it("reads the Web request of h3 1's toWebHandler, as on a Web host", async () => {
    const ids: string[] = [];
    const app = createApp().use(createRouter().post('/webhooks', verifyWebhook(options, (_event, { id }) => void ids.push(id)) as never));
    const answer = await toWebHandler(app)(new Request('http://receiver.test/webhooks', { method: 'POST', ...signedRequest() }));
    expect(answer.status).toBe(204);
    expect(ids).toEqual(['evt_1']);
  });
});

describe('h3 entry on h3 2', () => {
  it('answers 400, running nothing, when the body broke off mid-stream', async () => {
    const ids: string[] = [];
    const { body, headers } = signedRequest();
    const broken = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(body.slice(0, 10)));
        controller.error(new Error('the connection was reset'));
      },
    });
    const { 'content-length': _declared, ...streamed } = headers as Record<string, string>;
    const event = mockEvent('https://receiver.test/webhooks', { method: 'POST', headers: streamed, body: broken, duplex: 'half' } as RequestInit);
    expect((await verifyWebhook(options, (_event, { id }) => void ids.push(id))(event)).status).toBe(400);
    expect(ids).toEqual([]);
  });

  it('answers 500 body_already_parsed, running nothing, when a middleware read the body from event.req itself', async () => {
    const ids: string[] = [];
    const app = new H3()
      .use(async (event) => void (await event.req.text()))
      .post(
        '/webhooks',
        verifyWebhook(options, (_event, { id }) => void ids.push(id)),
      );
    const { url, close } = await serveNode(createServer(toNodeHandler(app)));
    try {
      const refused = await post(`${url}/webhooks`, signedRequest());
      const { error } = (await refused.json()) as { error: { code: string; message: string } };
      expect([refused.status, error.code]).toEqual([500, 'body_already_parsed']);
      expect(error.message).toContain('readRawBody()');
      expect(ids).toEqual([]);
    } finally {
      await close();
    }
  });

  it("refuses the body h3's own readRawBody read before it the same way: h3 2 keeps no raw bytes", async () => {
    const event = mockEvent('https://receiver.test/webhooks', { method: 'POST', ...signedRequest() });
    await readRawBodyV2(event);
    const refused = await verifyWebhook(options, () => undefined)(event);
    expect([refused.status, ((await refused.json()) as { error: { code: string } }).error.code]).toEqual([500, 'body_already_parsed']);
  });

  it("hands the claim's settling to the event's waitUntil, and answers once it settled", async () => {
    const held = heldStore();
    const event: H3Event = mockEvent('https://receiver.test/webhooks', { method: 'POST', ...signedRequest() });
    const kept: Array<Promise<unknown>> = [];
    event.waitUntil = (work) => void kept.push(work);
    const answering = verifyWebhook({ ...options, dedup: { store: held.dedup } }, () => undefined)(event);
    // What it hands over is the settling itself: pending while the store holds the claim's completion.
    await vi.waitFor(() => expect(kept).toHaveLength(1));
    expect(await isSettled(kept[0]!)).toBe(false);
    const answer = await expectAnswerAfterSettling(held, answering);
    expect(answer.status).toBe(204);
    expect(await isSettled(kept[0]!)).toBe(true);
    expect(kept).toHaveLength(1);
  });

  it("adds Retry-After to onError's answer for a delivery in progress, and keeps its own headers", async () => {
    const dedup = new TestDedupStore();
    await dedup.begin(keyOf('evt_1'));
    const webhook = verifyWebhook({ ...options, dedup: { store: dedup, leaseMs: 30_000 }, onError: () => new Response('busy', { status: 429, headers: { 'x-busy': 'yes' } }) }, () => undefined);
    const answer = await webhook(mockEvent('https://receiver.test/webhooks', { method: 'POST', ...signedRequest() }));
    expect([answer.status, answer.headers.get('x-busy'), answer.headers.get('retry-after'), await answer.text()]).toEqual([429, 'yes', '30', 'busy']);
  });

  it.each(creationMistakes)('throws WebhookOptionsError at creation for %s, saying what is wrong', (_name, badOptions, handler, message) => {
    expectOptionMistake(() => verifyWebhook(badOptions as never, handler as never), message);
  });
});
