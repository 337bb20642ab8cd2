/**
 * The Azure Functions entry (v4 programming model), with Azure's own
 * `HttpRequest`, `HttpResponse` and `InvocationContext` classes: the shared
 * adapter contract over HTTP through a bridge that builds each request as
 * the Functions host hands it over, and what is Azure's own: the answer
 * returned as it is (`status` absent is Azure's 200), `jsonBody` and a
 * `Headers` object kept, the settling waited for before the function
 * returns, and a body read before refused.
 */
import { HttpRequest, HttpResponse, InvocationContext, type HttpResponseInit } from '@azure/functions';
import { describe, expect, expectTypeOf, it, vi } from 'vitest';
import { verifyWebhook, type AzureWebhookContext, type AzureWebhookOptions } from '../../adapters/azure.js';
import type { WebhookEvent } from '../../src/index.js';
import { adapterContract, CUSTOM_ERROR_STATUS, customErrorBody, type AdapterHarness, type HarnessSpec } from '../helpers/adapter-contract.js';
import { orderingContract } from '../helpers/ordering-contract.js';
import { serveAzure } from '../helpers/adapter-servers.js';
import { creationMistakes, expectAnswerAfterSettling, heldStore } from '../helpers/handler-adapter.js';
import { expectOptionMistake } from '../helpers/option-mistake.js';
import { hearDeliveries } from '../helpers/heard-traces.js';
import { fetchHarness } from '../helpers/http-harness.js';
import { deliveryOf, keyOf, now, SECRET, signedRequest, type SignedRequest } from '../helpers/signed-request.js';
import { TestDedupStore } from '../helpers/test-dedup-store.js';

const options = { secret: SECRET, now } as const;
const context = new InvocationContext({ invocationId: 'inv-1', functionName: 'webhooks' });

const requestOf = ({ body, headers }: SignedRequest): HttpRequest =>
  new HttpRequest({ method: 'POST', url: 'https://receiver.test/api/webhooks', headers, body: { string: body } });

/** The body of an answer the entry decided: its JSON. */
const jsonOf = (answer: HttpResponseInit): unknown => JSON.parse(answer.body as string);

async function azureHarness({ options, route, customErrors }: HarnessSpec): Promise<AdapterHarness> {
  const onError: AzureWebhookOptions['onError'] = customErrors ? (error) => ({ status: CUSTOM_ERROR_STATUS, jsonBody: customErrorBody(error.code) }) : undefined;
  // The contract's failing route throws on purpose: its report would only be noise here.
  const webhook = verifyWebhook({ onHandlerError: () => undefined, ...options, onError }, async (event, { id, stale }) => {
    expectTypeOf(event).toEqualTypeOf<WebhookEvent>();
    return { status: await route.handle(event, id, stale) };
  });
  const { url, close } = await serveAzure(webhook);
  return fetchHarness(url, close);
}

describe('azure entry behind a bridge that builds Azure HttpRequests', () => {
  adapterContract(azureHarness);
  orderingContract(azureHarness);
});

describe('azure entry', () => {
  it('hands the handler the event, its delivery, the request and the invocation context; nothing returned answers 204', async () => {
    const seen: Array<[WebhookEvent, AzureWebhookContext]> = [];
    const handler = verifyWebhook(options, (event, delivered) => void seen.push([event, delivered]));
    const request = requestOf(signedRequest());
    expect(await handler(request, context)).toEqual({ status: 204, headers: {} });
    expect(seen).toEqual([[JSON.parse(signedRequest().body), { ...deliveryOf(), request, context }]]);
  });

  it("returns the handler's answer as it is, and settles the claim by its status, Azure's 200 when it names none", async () => {
    const dedup = new TestDedupStore();
    const answers: HttpResponseInit[] = [{ status: 503, body: 'later' }, { jsonBody: { queued: true } }];
    const handler = verifyWebhook({ ...options, dedup: { store: dedup } }, () => answers.shift());
    const later = await handler(requestOf(signedRequest()), context);
    expect(later).toEqual({ status: 503, body: 'later' });
    expect(dedup.stateOf(keyOf('evt_1'))).toBe('absent');
    const heard = hearDeliveries();
    try {
      expect(await handler(requestOf(signedRequest()), context)).toEqual({ jsonBody: { queued: true } });
      expect(heard.traces.map(({ status }) => status)).toEqual([200]);
    } finally {
      heard.stop();
    }
    expect(dedup.stateOf(keyOf('evt_1'))).toBe('done');
  });

  it("takes Azure's HttpResponse class as an answer", async () => {
    const dedup = new TestDedupStore();
    const answer = new HttpResponse({ status: 202, body: 'queued' });
    const handler = verifyWebhook({ ...options, dedup: { store: dedup } }, () => answer as unknown as HttpResponseInit);
    expect(await handler(requestOf(signedRequest()), context)).toBe(answer);
    expect(dedup.stateOf(keyOf('evt_1'))).toBe('done');
  });

  it('waits for the claim to settle before it returns: the invocation ends with its answer', async () => {
    const held = heldStore();
    const handler = verifyWebhook({ ...options, dedup: { store: held.dedup } }, () => undefined);
    expect((await expectAnswerAfterSettling(held, handler(requestOf(signedRequest()), context))).status).toBe(204);
  });

  it('answers a refusal with its JSON error and content type', async () => {
    const handler = verifyWebhook(options, () => undefined);
    const refused = await handler(requestOf(signedRequest({ secret: SECRET.replace('w', 'W') })), context);
    expect(refused).toMatchObject({ status: 400, headers: { 'content-type': 'application/json' } });
    expect(jsonOf(refused)).toMatchObject({ error: { code: 'invalid_signature' } });
  });

  it('answers 500 body_already_parsed when the body was read before it', async () => {
    const calls: string[] = [];
    const handler = verifyWebhook(options, (_event, { id }) => void calls.push(id));
    const request = requestOf(signedRequest());
    await request.text();
    const refused = await handler(request, context);
    expect([refused.status, (jsonOf(refused) as { error: { code: string } }).error.code]).toEqual([500, 'body_already_parsed']);
    expect(calls).toEqual([]);
  });

  it.each([['a string', 'done'], ['null', null]])('answers 500 when the handler returns something that is no answer, %s, and names what it must return', async (_name, returned) => {
    const onHandlerError = vi.fn();
    const handler = verifyWebhook({ ...options, onHandlerError }, (() => returned) as never);
    expect((await handler(requestOf(signedRequest()), context)).status).toBe(500);
    expect(onHandlerError.mock.calls[0]![0]).toBeInstanceOf(TypeError);
    expect(String(onHandlerError.mock.calls[0]![0])).toContain('{ status, ... }');
  });

  it('answers 500 when the handler returns a status that is no whole number', async () => {
    const onHandlerError = vi.fn();
    const handler = verifyWebhook({ ...options, onHandlerError }, (() => ({ status: '204' })) as never);
    expect((await handler(requestOf(signedRequest()), context)).status).toBe(500);
    expect(onHandlerError.mock.calls[0]![0]).toBeInstanceOf(TypeError);
  });

  it('answers 400, running nothing, when the body broke off mid-stream (Azure streams large bodies)', async () => {
    const calls: string[] = [];
    const handler = verifyWebhook(options, (_event, { id }) => void calls.push(id));
    const { body, headers } = signedRequest();
    const broken = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(body.slice(0, 10)));
        controller.error(new Error('the connection was reset'));
      },
    });
    const { 'content-length': _declared, ...streamed } = headers as Record<string, string>;
    // A Fetch Request reads as Azure's HttpRequest does; Azure's own class takes no stream to build one from.
    const request = Object.assign(new Request('https://receiver.test/api/webhooks', { method: 'POST', headers: streamed, body: broken, duplex: 'half' } as RequestInit), { params: {} });
    expect(await handler(request as unknown as HttpRequest, context)).toEqual({ status: 400, headers: {} });
    expect(calls).toEqual([]);
  });

  it("adds Retry-After to onError's answer for a delivery in progress, whatever form its headers take, and keeps its own", async () => {
    const dedup = new TestDedupStore();
    await dedup.begin(keyOf('evt_1'));
    const answers: HttpResponseInit[] = [
      { status: 429, headers: new Headers({ 'x-busy': 'yes' }), body: 'busy' },
      { status: 429, headers: [['Retry-After', '7']] },
    ];
    const handler = verifyWebhook({ ...options, dedup: { store: dedup, leaseMs: 30_000 }, onError: () => answers.shift()! }, () => undefined);
    expect(await handler(requestOf(signedRequest()), context)).toEqual({ status: 429, headers: { 'x-busy': 'yes', 'retry-after': '30' }, body: 'busy' });
    expect(await handler(requestOf(signedRequest()), context)).toEqual({ status: 429, headers: [['Retry-After', '7']] });
  });

  it('gives the default answer, and logs why, when onError returns no answer', async () => {
    const log = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      const handler = verifyWebhook({ ...options, onError: (() => 'nope') as never }, () => undefined);
      const refused = await handler(requestOf(signedRequest({ secret: SECRET.replace('w', 'W') })), context);
      expect([refused.status, (jsonOf(refused) as { error: { code: string } }).error.code]).toEqual([400, 'invalid_signature']);
      expect(log.mock.calls.flat().join(' ')).toContain('{ status, ... }');
    } finally {
      log.mockRestore();
    }
  });

  it('reads the tenant from the route parameters', async () => {
    const secretOf = (tenant: string): string => (tenant === 'acme' ? SECRET : SECRET.replace('w', 'W'));
    const tenants: Array<string | undefined> = [];
    const handler = verifyWebhook({ tenants: { of: (request) => request.params.tenant, secret: secretOf }, now }, (_event, { tenant }) => void tenants.push(tenant));
    const { body, headers } = signedRequest();
    const request = new HttpRequest({ method: 'POST', url: 'https://receiver.test/api/webhooks/acme', headers, body: { string: body }, params: { tenant: 'acme' } });
    expect((await handler(request, context)).status).toBe(204);
    expect(tenants).toEqual(['acme']);
  });

  it.each(creationMistakes)('throws WebhookOptionsError at creation for %s, saying what is wrong', (_name, badOptions, handler, message) => {
    expectOptionMistake(() => verifyWebhook(badOptions as never, handler as never), message);
  });
});
