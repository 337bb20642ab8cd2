import { createAdaptorServer } from '@hono/node-server';
import type { Server } from 'node:http';
import { describe, expect, expectTypeOf, it, vi } from 'vitest';
import { verifyWebhook, type FetchWebhook, type FetchWebhookContext, type FetchWebhookOptions } from '../../adapters/fetch.js';
import type { DedupStore, WebhookEvent } from '../../src/index.js';
import {
  adapterContract,
  CUSTOM_ERROR_STATUS,
  customErrorBody,
  disconnectContract,
  RouteSpy,
  type AdapterHarness,
  type HarnessSpec,
} from '../helpers/adapter-contract.js';
import { orderingContract } from '../helpers/ordering-contract.js';
import { closeServer, expect413WhileSending, fetchHarness, listen } from '../helpers/http-harness.js';
import { deliveryOf, keyOf, SECRET, now, signedRequest, type SignedRequest } from '../helpers/signed-request.js';
import { creationMistakes, expectAnswerAfterSettling, heldStore, isSettled } from '../helpers/handler-adapter.js';
import { expectOptionMistake } from '../helpers/option-mistake.js';
import { TestDedupStore } from '../helpers/test-dedup-store.js';
import { WebhookOptionsError } from '../../src/base/options-error.js';

const options = { secret: SECRET, now } as const;
/** Only the timers: the body streams and isSettled run on real I/O callbacks. */
const TIMERS: Parameters<typeof vi.useFakeTimers>[0] = { toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] };

function webhookHandler({ options, route, customErrors }: HarnessSpec): FetchWebhook {
  const onError: FetchWebhookOptions['onError'] = customErrors
    ? (error) => Response.json(customErrorBody(error.code), { status: CUSTOM_ERROR_STATUS })
    : undefined;
  // The contract's failing route throws on purpose: its report would only be noise here.
  return verifyWebhook({ onHandlerError: () => undefined, ...options, onError }, async (event, { id, stale }) => {
    expectTypeOf(event).toEqualTypeOf<WebhookEvent>();
    return new Response(null, { status: await route.handle(event, id, stale) });
  });
}

/** Serves `handler` with Node's HTTP server, through the Fetch bridge of @hono/node-server. */
async function nodeServer(handler: FetchWebhook): Promise<{ url: string; close: () => Promise<void> }> {
  const server = createAdaptorServer({ fetch: handler }) as Server;
  const url = await listen(server);
  return { url, close: () => closeServer(server) };
}

async function nodeHarness(spec: HarnessSpec): Promise<AdapterHarness> {
  const { url, close } = await nodeServer(webhookHandler(spec));
  return fetchHarness(url, close);
}

const requestOf = ({ body, headers }: SignedRequest): Request =>
  new Request('https://receiver.test/webhooks', { method: 'POST', body, headers });

describe('fetch adapter served by Node', () => {
  adapterContract(nodeHarness);
  orderingContract(nodeHarness);
  disconnectContract(nodeHarness);

  it('answers 413 while a chunked body past the limit is still being sent', async () => {
    const route = new RouteSpy();
    const { url, close } = await nodeServer(webhookHandler({ options: { ...options, maxPayloadBytes: 64 * 1024 }, route }));
    try {
      await expect413WhileSending(`${url}/webhooks`, signedRequest().headers);
      expect(route.calls).toEqual([]);
    } finally {
      await close();
    }
  });
});

describe('fetch adapter', () => {
  it('hands the handler the event, its delivery (id, timestamp, keyId, dedupKey), the request and what the host passed after it; nothing returned answers 204', async () => {
    const seen: Array<[WebhookEvent, FetchWebhookContext]> = [];
    const handler = verifyWebhook(options, (event, context) => void seen.push([event, context]));
    const request = requestOf(signedRequest());
    const env = { REGION: 'eu' };
    const response = await handler(request, env);
    expect([response.status, await response.text()]).toEqual([204, '']);
    expect(seen).toEqual([[JSON.parse(signedRequest().body), { ...deliveryOf(), request, context: [env] }]]);
    expect(seen[0]![1].context[0]).toBe(env);
  });

  it('sends the handler Response as it is, and settles the claim by its status', async () => {
    const dedup = new TestDedupStore();
    // Only a 2xx tells the sender to stop: a redirect is no success either.
    const answers = [new Response('later', { status: 503 }), new Response(null, { status: 300 }), Response.json({ queued: true }, { status: 202, headers: { 'x-queued': 'yes' } })];
    const handler = verifyWebhook({ ...options, dedup: { store: dedup } }, () => answers.shift());
    const first = await handler(requestOf(signedRequest()));
    expect([first.status, await first.text(), dedup.stateOf(keyOf('evt_1'))]).toEqual([503, 'later', 'absent']);
    expect([(await handler(requestOf(signedRequest()))).status, dedup.stateOf(keyOf('evt_1'))]).toEqual([300, 'absent']);
    const second = await handler(requestOf(signedRequest()));
    expect([second.status, second.headers.get('x-queued'), await second.json()]).toEqual([202, 'yes', { queued: true }]);
    expect(dedup.stateOf(keyOf('evt_1'))).toBe('done');
  });

  it('waits for the claim to settle before it answers, when the host gives no waitUntil', async () => {
    const held = heldStore();
    const handler = verifyWebhook({ ...options, dedup: { store: held.dedup } }, () => undefined);
    // @hono/node-server and Bun pass an extra argument without waitUntil.
    const response = await expectAnswerAfterSettling(held, handler(requestOf(signedRequest()), { incoming: {} }));
    expect(response.status).toBe(204);
  });

  it("waits for the settling at most 1 s and hands it to ctx.waitUntil, a Worker's third argument", async () => {
    vi.useFakeTimers(TIMERS);
    try {
      const { dedup, open } = heldStore();
      const handler = verifyWebhook({ ...options, dedup: { store: dedup } }, () => undefined);
      const waiting: Promise<unknown>[] = [];
      const ctx = {
        // Checks it is called as a method, as workerd requires.
        waitUntil(this: unknown, promise: Promise<unknown>) {
          if (this !== ctx) throw new TypeError('Illegal invocation');
          waiting.push(promise);
        },
      };
      const answer = handler(requestOf(signedRequest()), { WEBHOOK_SECRET: 'env' }, ctx);
      await vi.advanceTimersByTimeAsync(999);
      expect(await isSettled(answer)).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      expect([(await answer).status, dedup.stateOf(keyOf('evt_1')), waiting.length]).toEqual([204, 'leased', 1]);
      open();
      await waiting[0];
      expect(dedup.stateOf(keyOf('evt_1'))).toBe('done');
    } finally {
      vi.useRealTimers();
    }
  });

  it.each([
    ['a handler', (dedup: DedupStore, onStoreError: () => void) => verifyWebhook({ ...options, dedup: { store: dedup, onError: onStoreError } }, () => undefined)],
    ['on', (dedup: DedupStore, onStoreError: () => void) => verifyWebhook({ ...options, dedup: { store: dedup, onError: onStoreError }, on: { 'call.missed': () => {} } })],
  ])('answers after 1 s, with %s, while the store keeps failing to record the outcome until the lease ends', async (_name, create) => {
    vi.useFakeTimers(TIMERS);
    try {
      const dedup = new TestDedupStore();
      dedup.complete = () => Promise.reject(new Error('the store is down'));
      const onStoreError = vi.fn();
      const answer = create(dedup, onStoreError)(requestOf(signedRequest()));
      await vi.advanceTimersByTimeAsync(1000);
      expect(await isSettled(answer)).toBe(true);
      expect((await answer).status).toBe(204);
      expect(onStoreError).not.toHaveBeenCalled();
      // The settle goes on after the answer, retrying until shortly before the default 60 s lease ends.
      await vi.advanceTimersByTimeAsync(60_000);
      expect(onStoreError).toHaveBeenCalledOnce();
    } finally {
      vi.useRealTimers();
    }
  });

  it('answers a throwing handler 500 with a fixed error, releases the claim, and tells onHandlerError', async () => {
    const dedup = new TestDedupStore();
    const onHandlerError = vi.fn();
    const failure = new Error('db password=hunter2 refused');
    const handler = verifyWebhook({ ...options, dedup: { store: dedup }, onHandlerError }, async () => {
      throw failure;
    });
    const response = await handler(requestOf(signedRequest()));
    expect(response.status).toBe(500);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(await response.json()).toEqual({ error: { code: 'handler_failed', message: 'the handler for this event failed; retry later' } });
    expect(onHandlerError).toHaveBeenCalledExactlyOnceWith(failure, JSON.parse(signedRequest().body), deliveryOf());
    expect(dedup.stateOf(keyOf('evt_1'))).toBe('absent');
  });

  it('logs one line for a throwing handler by default', async () => {
    const log = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      const handler = verifyWebhook(options, () => {
        throw new RangeError('out of range');
      });
      expect((await handler(requestOf(signedRequest()))).status).toBe(500);
      expect(log).toHaveBeenCalledTimes(1);
      expect(log.mock.calls[0]!.join(' ')).toMatch(/^svc-webhooks: event "evt_1" of type "call.missed": the handler failed \(RangeError: out of range\)/);
    } finally {
      log.mockRestore();
    }
  });

  it.each([
    ['throws', () => {
      throw new Error('the report failed');
    }],
    ['rejects', () => Promise.reject(new Error('the report failed'))],
  ])('still answers 500 when onHandlerError itself %s', async (_name, onHandlerError) => {
    const handler = verifyWebhook({ ...options, onHandlerError }, () => {
      throw new Error('the handler failed');
    });
    expect((await handler(requestOf(signedRequest()))).status).toBe(500);
  });

  it('answers 500 when the handler returns something that is no Response', async () => {
    const onHandlerError = vi.fn();
    const handler = verifyWebhook({ ...options, onHandlerError }, (() => ({ ok: true })) as never);
    expect((await handler(requestOf(signedRequest()))).status).toBe(500);
    expect(onHandlerError.mock.calls[0]![0]).toBeInstanceOf(TypeError);
  });

  it('answers 500 body_already_parsed when the body was read before it', async () => {
    const route = new RouteSpy();
    const handler = webhookHandler({ options, route });
    const request = requestOf(signedRequest());
    await request.text();
    const response = await handler(request);
    expect([response.status, ((await response.json()) as { error: { code: string } }).error.code]).toEqual([500, 'body_already_parsed']);
    expect(route.calls).toEqual([]);
  });

  it('holds a body whose Content-Length understates it to the limit all the same', async () => {
    const route = new RouteSpy();
    const { body, headers } = signedRequest({ body: JSON.stringify({ id: 'evt_1', pad: 'x'.repeat(5000) }) });
    const request = new Request('https://receiver.test/webhooks', { method: 'POST', body, headers: { ...headers, 'content-length': '100' } });
    const response = await webhookHandler({ options: { ...options, maxPayloadBytes: 4096 }, route })(request);
    expect([response.status, ((await response.json()) as { error: { code: string } }).error.code]).toEqual([413, 'payload_too_large']);
    expect(route.calls).toEqual([]);
  });

  it('refuses 413 a declared Content-Length past the limit, whatever the body holds', async () => {
    const route = new RouteSpy();
    const { body, headers } = signedRequest();
    const request = new Request('https://receiver.test/webhooks', { method: 'POST', body, headers: { ...headers, 'content-length': '5000' } });
    const response = await webhookHandler({ options: { ...options, maxPayloadBytes: 4096 }, route })(request);
    expect([response.status, ((await response.json()) as { error: { code: string } }).error.code]).toEqual([413, 'payload_too_large']);
    expect(route.calls).toEqual([]);
  });

  it('says how to hand over the request when its body was read before', async () => {
    const request = requestOf(signedRequest());
    await request.text();
    const response = await verifyWebhook(options, () => undefined)(request);
    expect(((await response.json()) as { error: { message: string } }).error.message).toBe(
      'the request body was read before verifyWebhook; hand it the request unread (in Elysia, a route that never reads `body`)',
    );
  });

  it('names what the handler must return when it returns something else', async () => {
    const onHandlerError = vi.fn();
    await verifyWebhook({ ...options, onHandlerError }, (() => 'ok') as never)(requestOf(signedRequest()));
    expect(onHandlerError.mock.calls[0]![0]).toEqual(new WebhookOptionsError('svc-webhooks: the webhook handler must return a Response or nothing'));
  });

  it('takes waitUntil from whichever extra argument has one, past those that are null, undefined or lack it', async () => {
    const dedup = new TestDedupStore();
    const waiting: Promise<unknown>[] = [];
    const ctx = { waitUntil: (promise: Promise<unknown>) => void waiting.push(promise) };
    const handler = verifyWebhook({ ...options, dedup: { store: dedup } }, () => undefined);
    const response = await handler(requestOf(signedRequest()), null, undefined, 'env', { waitUntil: 'not a function' }, ctx);
    expect(response.status).toBe(204);
    expect(waiting).toHaveLength(1);
    await waiting[0];
    expect(dedup.stateOf(keyOf('evt_1'))).toBe('done');
  });

  it('settles without waitUntil when no extra argument has one', async () => {
    const dedup = new TestDedupStore();
    const handler = verifyWebhook({ ...options, dedup: { store: dedup } }, () => undefined);
    const response = await handler(requestOf(signedRequest()), null, undefined, { env: 'production' });
    expect([response.status, dedup.stateOf(keyOf('evt_1'))]).toEqual([204, 'done']);
  });

  it('hands onError the refusal, the request and what the host passed after it; its own Retry-After, in any letter case, is kept', async () => {
    const dedup = new TestDedupStore();
    await dedup.begin(keyOf('evt_1'));
    const heard: unknown[][] = [];
    const onError = (...args: unknown[]) => {
      heard.push(args);
      return new Response('busy', { status: 429, headers: { 'Retry-After': '90' } });
    };
    const request = requestOf(signedRequest());
    const env = { REGION: 'eu' };
    const response = await verifyWebhook({ ...options, dedup: { store: dedup, leaseMs: 30_000 }, onError }, () => undefined)(request, env);
    expect([response.status, response.headers.get('retry-after')]).toEqual([429, '90']);
    expect(heard).toHaveLength(1);
    const [error, gotRequest, context] = heard[0]!;
    expect([(error as { code: string }).code, gotRequest, context]).toEqual(['delivery_in_progress', request, [env]]);
    expect(gotRequest).toBe(request);
  });

  it('adds Retry-After to the answer of onError for a delivery in progress', async () => {
    const dedup = new TestDedupStore();
    await dedup.begin(keyOf('evt_1'));
    const onError = () => new Response('busy', { status: 429 });
    const response = await verifyWebhook({ ...options, dedup: { store: dedup, leaseMs: 30_000 }, onError }, () => undefined)(requestOf(signedRequest()));
    expect([response.status, response.headers.get('retry-after'), await response.text()]).toEqual([429, '30', 'busy']);
  });

  it("reports a failing begin to dedup.onError and answers 503 with Retry-After, handing onError the store's error as cause", async () => {
    const down = Object.assign(new Error('relation "processed_webhooks" does not exist'), { code: '42P01' });
    const dedup = new TestDedupStore();
    dedup.begin = () => Promise.reject(down);
    const heard: unknown[][] = [];
    const causes: unknown[] = [];
    const onError = (error: Error) => {
      causes.push(error.cause);
      return Response.json({ refused: true }, { status: 503 });
    };
    const handler = verifyWebhook({ ...options, dedup: { store: dedup, onError: (...args) => void heard.push(args) }, onError }, () => undefined);
    const response = await handler(requestOf(signedRequest()));
    expect([response.status, response.headers.get('retry-after')]).toEqual([503, '5']);
    expect(heard).toEqual([[down, { operation: 'begin', key: keyOf('evt_1'), id: 'evt_1', type: 'call.missed' }]]);
    expect(causes).toEqual([down]);
  });

  it('answers 500 body_already_parsed for a request whose body stream a reader locked without reading', async () => {
    const handler = vi.fn();
    const request = requestOf(signedRequest());
    request.body!.getReader();
    const response = await verifyWebhook({ ...options, dedup: false }, handler)(request);
    expect([response.status, ((await response.json()) as { error: { code: string } }).error.code]).toEqual([500, 'body_already_parsed']);
    expect(handler).not.toHaveBeenCalled();
  });

  it('gives the default answer, with one log line, when onError answers a Response whose body was read, on a refusal with headers', async () => {
    const log = vi.spyOn(console, 'error').mockImplementation(() => {});
    const dedup = new TestDedupStore();
    await dedup.begin(keyOf('evt_1'));
    const onError = async () => {
      const used = new Response('busy', { status: 429 });
      await used.text();
      return used;
    };
    const response = await verifyWebhook({ ...options, dedup: { store: dedup, leaseMs: 30_000 }, onError }, () => undefined)(requestOf(signedRequest()));
    expect([response.status, response.headers.get('retry-after'), ((await response.json()) as { error: { code: string } }).error.code]).toEqual([409, '30', 'delivery_in_progress']);
    expect(log).toHaveBeenCalledTimes(1);
    expect(log.mock.calls[0]![0]).toMatch(/^svc-webhooks: onError failed \(.*\); a request it left unanswered gets the default answer$/);
    log.mockRestore();
  });

  it("answers anyway when the platform's waitUntil throws, logs it, and still settles the claim", async () => {
    const log = vi.spyOn(console, 'error').mockImplementation(() => {});
    const dedup = new TestDedupStore();
    const ctx = {
      waitUntil() {
        throw new Error('the request context is gone');
      },
    };
    const response = await verifyWebhook({ ...options, dedup: { store: dedup } }, () => undefined)(requestOf(signedRequest()), {}, ctx);
    expect(response.status).toBe(204);
    expect(log.mock.calls).toEqual([[`svc-webhooks: the platform's waitUntil threw (the request context is gone); the claim of event "evt_1" is settled without it`]]);
    await vi.waitFor(() => expect(dedup.stateOf(keyOf('evt_1'))).toBe('done'));
    log.mockRestore();
  });

  it('gives the default answer, and logs why, when onError returns no Response', async () => {
    const log = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const handler = verifyWebhook({ ...options, onError: (() => ({ status: 418 })) as never }, () => undefined);
    const response = await handler(requestOf(signedRequest({ secret: SECRET.replace('w', 'W') })));
    expect(response.status).toBe(400);
    expect(log.mock.calls.at(-1)).toEqual(['svc-webhooks: onError failed (it must answer a Response); a request it left unanswered gets the default answer']);
    log.mockRestore();
  });

  it('answers 400, running nothing, when the body broke off mid-stream', async () => {
    const handler = vi.fn();
    const { headers } = signedRequest();
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"id":'));
        controller.error(new Error('connection reset'));
      },
    });
    const request = new Request('http://receiver.test/webhooks', { method: 'POST', body: stream, headers, duplex: 'half' } as RequestInit);
    const response = await verifyWebhook({ ...options, dedup: false }, handler)(request);
    expect([response.status, response.body]).toEqual([400, null]);
    expect(handler).not.toHaveBeenCalled();
  });

  it('closes the connection on a body refusal that left part of the body unread', async () => {
    const { body, headers } = signedRequest();
    const request = new Request('http://receiver.test/webhooks', { method: 'POST', body, headers: { ...headers, 'content-length': String(2_000_000) } });
    const response = await verifyWebhook({ ...options, dedup: false }, () => undefined)(request);
    expect([response.status, response.headers.get('connection')]).toEqual([413, 'close']);
  });

  it.each(creationMistakes)('throws WebhookOptionsError at creation for %s, saying what is wrong', (_name, badOptions, handler, message) => {
    expectOptionMistake(() => verifyWebhook(badOptions as never, handler as never), message);
  });

  it('answers 404 unknown_tenant for a tenant with a lone surrogate, with no lookup', async () => {
    const lookups: string[] = [];
    const handler = verifyWebhook({ now, tenants: { of: () => 'acme-\udfff', secret: (tenant: string) => void lookups.push(tenant) }}, () => undefined);
    const { body, headers } = signedRequest();
    const response = await handler(new Request('http://receiver.test/webhooks/acme', { method: 'POST', body, headers }));
    expect(response.status).toBe(404);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('unknown_tenant');
    expect(lookups).toEqual([]);
  });
});
