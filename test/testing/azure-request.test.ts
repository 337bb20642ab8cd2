/**
 * signedAzureRequest reads as Azure's own HttpRequest built from the same
 * request, and the Azure entry verifies it, refuses it tampered or read
 * before, and reads the tenant from its route parameters.
 */
import { HttpRequest } from '@azure/functions';
import { describe, expect, it } from 'vitest';
import { verifyWebhook } from '../../adapters/azure.js';
import { WebhookOptionsError } from '../../src/base/options-error.js';
import { signedAzureRequest, testAzureContext, type TestAzureRequest } from '../../src/testing/index.js';
import { envelope, NOW_SECONDS, now, SECRET, signedRequest } from '../helpers/signed-request.js';

const { body, headers } = signedRequest();
const URL_OF_TENANT = 'https://receiver.test/api/webhooks/acme?attempt=1';
const signed = (options: { url?: string; params?: Record<string, string> } = {}): TestAzureRequest =>
  signedAzureRequest(body, { secret: SECRET, timestamp: NOW_SECONDS, ...options });
const quiet = { logHandler: () => undefined };

/** What a handler can read of a request, body included. */
async function readingOf(request: Pick<HttpRequest, 'method' | 'url' | 'headers' | 'query' | 'params' | 'user' | 'bodyUsed' | 'text' | 'clone'>) {
  const copy = await request.clone().text();
  const before = request.bodyUsed;
  const text = await request.text();
  return { method: request.method, url: request.url, headers: Object.fromEntries(request.headers), query: [...request.query], params: request.params, user: request.user, before, text, copy, after: request.bodyUsed };
}

describe('signedAzureRequest', () => {
  it("reads as Azure's own HttpRequest of the same request: URL, query, headers with the length, params, body once", async () => {
    const request = signed({ url: URL_OF_TENANT, params: { tenant: 'acme' } });
    const azure = new HttpRequest({
      method: 'POST',
      url: URL_OF_TENANT,
      headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
      params: { tenant: 'acme' },
      body: { string: body },
    });
    const reading = await readingOf(request);
    expect(reading).toEqual(await readingOf(azure));
    expect(reading).toMatchObject({ url: URL_OF_TENANT, query: [['attempt', '1']], before: false, text: body, after: true });
    expect(reading.headers).toMatchObject({ ...headers, 'content-length': String(Buffer.byteLength(body)) });
    await expect(request.arrayBuffer()).rejects.toThrow(TypeError);
  });

  it('goes to Azure\'s route under /api by default, with no params, and reads its body as JSON or bytes', async () => {
    const request = signed();
    expect([request.url, request.params]).toEqual(['https://receiver.test/api/webhooks', {}]);
    expect(request.body).toBeInstanceOf(ReadableStream);
    expect(await request.clone().json()).toEqual(JSON.parse(body));
    expect(Buffer.from(await request.clone().arrayBuffer()).toString()).toBe(body);
    expect(await (await request.clone().blob()).text()).toBe(body);
    // A JSON body is no form, as for Azure's own class.
    await expect(request.formData()).rejects.toThrow(TypeError);
  });

  it('signs an event given as an object as its compact JSON, under its id', async () => {
    const event = JSON.parse(envelope('evt_given', 'call.missed'));
    const request = signedAzureRequest(event, { secret: SECRET });
    expect([request.headers.get('webhook-id'), await request.text()]).toEqual(['evt_given', JSON.stringify(event)]);
  });

  it.each([
    [{ url: '/api/webhooks' }, 'svc-webhooks: url must be an absolute URL'],
    [{ params: 'acme' }, 'svc-webhooks: params must be an object'],
    [{ params: null }, 'svc-webhooks: params must be an object'],
  ])('refuses %j', (options, message) => {
    expect(() => signedAzureRequest(body, { secret: SECRET, ...options } as never)).toThrow(new WebhookOptionsError(message));
  });
});

describe("the Azure entry on the kit's requests", () => {
  it('verifies one and hands the handler that request and context, and refuses one signed with another secret', async () => {
    const seen: unknown[] = [];
    const handler = verifyWebhook({ secret: SECRET, now }, (_event, { id, request, context }) => void seen.push([id, request, context]));
    const request = signed();
    const context = testAzureContext(quiet);
    expect(await handler(request, context)).toEqual({ status: 204, headers: {} });
    expect(seen).toEqual([['evt_1', request, context]]);
    const refused = await handler(signedAzureRequest(body, { secret: SECRET.replace('w', 'W'), timestamp: NOW_SECONDS }), testAzureContext(quiet));
    expect([refused.status, JSON.parse(refused.body as string).error.code]).toEqual([400, 'invalid_signature']);
  });

  it('answers 500 body_already_parsed for one whose body was read before', async () => {
    const handler = verifyWebhook({ secret: SECRET, now }, () => undefined);
    const request = signed();
    await request.text();
    const refused = await handler(request, testAzureContext(quiet));
    expect([refused.status, JSON.parse(refused.body as string).error.code]).toEqual([500, 'body_already_parsed']);
  });

  it('reads the tenant from its route parameters', async () => {
    const tenants: Array<string | undefined> = [];
    const handler = verifyWebhook(
      { now, tenants: { of: (request) => request.params.tenant, secret: (tenant) => (tenant === 'acme' ? SECRET : undefined) } },
      (_event, { tenant }) => void tenants.push(tenant),
    );
    expect((await handler(signed({ url: URL_OF_TENANT, params: { tenant: 'acme' } }), testAzureContext(quiet))).status).toBe(204);
    expect(tenants).toEqual(['acme']);
  });
});
