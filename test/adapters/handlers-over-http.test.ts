/**
 * `on` on every adapter, over a real listening server: the shared handler
 * contract per adapter (the Fetch entry served by Node, the Lambda entry
 * behind a bridge per HTTP source), then what only Fastify has (`path`
 * instead of `routes`).
 */
import Fastify from 'fastify';
import { describe, expect, it, vi } from 'vitest';
import { verifyWebhook as fastifyWebhook } from '../../adapters/fastify.js';
import { verifyWebhook as fetchWebhook } from '../../adapters/fetch.js';
import { verifyWebhook as h3Webhook } from '../../adapters/h3.js';
import { verifyWebhook as azureWebhook } from '../../adapters/azure.js';
import { verifyWebhook as lambdaWebhook } from '../../adapters/lambda.js';
import type { WebhookError } from '../../src/index.js';
import { CUSTOM_ERROR_STATUS, customErrorBody } from '../helpers/adapter-contract.js';
import { serveAzure, serveExpressHandlers, serveFastifyHandlers, serveFetch, serveH3, serveHonoHandlers, serveLambda, type ServedApp } from '../helpers/adapter-servers.js';
import { handlerContract } from '../helpers/handler-contract.js';
import { LAMBDA_SOURCES, lambdaContext } from '../helpers/lambda-events.js';
import { SECRET, now, signedRequest } from '../helpers/signed-request.js';

const customBody = (error: WebhookError) => customErrorBody(error.code);
const broken = (): never => {
  throw new Error('onError broke');
};

describe('express adapter with on, over HTTP', () => {
  handlerContract((options, onError) =>
    serveExpressHandlers({
      ...options,
      onError: onError === 'custom' ? (error, _req, res) => void res.status(CUSTOM_ERROR_STATUS).json(customBody(error)) : onError && broken,
    }),
  );
});

describe('hono adapter with on, over HTTP', () => {
  handlerContract((options, onError) =>
    serveHonoHandlers({
      ...options,
      onError: onError === 'custom' ? (error) => Response.json(customBody(error), { status: CUSTOM_ERROR_STATUS }) : onError && broken,
    }),
  );
});

describe('fetch entry with on, served by Node', () => {
  handlerContract((options, onError) =>
    serveFetch(
      fetchWebhook({
        ...options,
        on: options.on!,
        onError: onError === 'custom' ? (error) => Response.json(customBody(error), { status: CUSTOM_ERROR_STATUS }) : onError && broken,
      }),
    ),
  );
});

for (const source of LAMBDA_SOURCES) {
  describe(`lambda entry with on, behind ${source}`, () => {
    handlerContract((options, onError) =>
      serveLambda(
        source,
        lambdaWebhook({
          ...options,
          on: options.on!,
          onError:
            onError === 'custom'
              ? (error) => ({ statusCode: CUSTOM_ERROR_STATUS, headers: { 'content-type': 'application/json' }, body: JSON.stringify(customBody(error)) })
              : onError && broken,
        }),
      ),
    );
  });
}

describe('azure entry with on, behind a bridge that builds Azure HttpRequests', () => {
  handlerContract((options, onError) =>
    serveAzure(
      azureWebhook({
        ...options,
        on: options.on!,
        onError: onError === 'custom' ? (error) => ({ status: CUSTOM_ERROR_STATUS, jsonBody: customBody(error) }) : onError && broken,
      }),
    ),
  );
});

describe('h3 entry with on, on h3 2 over HTTP', () => {
  handlerContract((options, onError) =>
    serveH3(
      h3Webhook({
        ...options,
        on: options.on!,
        onError: onError === 'custom' ? (error) => Response.json(customBody(error), { status: CUSTOM_ERROR_STATUS }) : onError && broken,
      }),
    ),
  );
});

describe('fastify adapter with path and on, over HTTP', () => {
  handlerContract((options, onError) =>
    serveFastifyHandlers({
      ...options,
      on: options.on!,
      onError:
        onError === 'custom'
          ? async (error, _request, reply) => void (await reply.code(CUSTOM_ERROR_STATUS).send(customBody(error)))
          : onError && broken,
    }),
  );

  it("registers its route at path under register's prefix, leaving the app's other routes their JSON parsing", async () => {
    const handler = vi.fn();
    const app = Fastify();
    await app.register(fastifyWebhook({ secret: SECRET, now, path: '/in', on: { 'call.missed': handler } }), { prefix: '/hooks' });
    app.post('/orders', async (request) => ({ echoed: request.body }));
    const url = await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const { body, headers } = signedRequest();
      expect((await fetch(`${url}/hooks/in`, { method: 'POST', body, headers })).status).toBe(204);
      expect(handler).toHaveBeenCalledOnce();
      const order = await fetch(`${url}/orders`, { method: 'POST', body: '{"sku":"A1"}', headers: { 'content-type': 'application/json' } });
      expect(await order.json()).toEqual({ echoed: { sku: 'A1' } });
    } finally {
      await app.close();
    }
  });

  const queue = { hand: async (): Promise<void> => undefined };
  it.each([
    ['routes with on', { routes: () => {}, on: {} }],
    ['routes with handoff', { routes: () => {}, handoff: queue }],
    ['path without on', { path: '/webhooks' }],
    ['path with both on and handoff', { path: '/webhooks', on: {}, handoff: queue }],
    ['both routes and path', { routes: () => {}, path: '/webhooks', on: {} }],
    ['neither routes nor path', {}],
    ['neither routes nor path, with on', { on: {} }],
    ['a path that is no string', { path: 42, on: {} }],
  ])('throws TypeError at creation for %s', (_name, mount) => {
    expect(() => fastifyWebhook({ secret: SECRET, ...mount } as never)).toThrow(TypeError);
  });
});

describe("on's handlers of the Fetch, Lambda, Azure and h3 entries, over HTTP", () => {
  /** Posts one signed event to `app`, closes it, and answers the status. */
  async function postOnce(app: ServedApp): Promise<number> {
    try {
      const { body, headers } = signedRequest();
      return (await fetch(`${app.url}/webhooks`, { method: 'POST', body, headers })).status;
    } finally {
      await app.close();
    }
  }

  it("get the host's request and context beside the delivery, as the entry's single handler does", async () => {
    const seen: Record<string, unknown[]> = {};
    const record = (entry: string) => (_event: unknown, delivery: { id: string; request: unknown; context: unknown }) => void (seen[entry] = [delivery.id, delivery.request, delivery.context]);
    expect(await postOnce(await serveFetch(fetchWebhook({ secret: SECRET, now, on: { 'call.missed': record('fetch') } })))).toBe(204);
    expect(await postOnce(await serveLambda('http-api', lambdaWebhook({ secret: SECRET, now, on: { 'call.missed': record('lambda') } })))).toBe(204);
    expect(await postOnce(await serveAzure(azureWebhook({ secret: SECRET, now, on: { 'call.missed': record('azure') } })))).toBe(204);
    expect(await postOnce(await serveH3(h3Webhook({ secret: SECRET, now, on: { 'call.missed': record('h3') } })))).toBe(204);
    expect(seen.fetch).toEqual(['evt_1', expect.any(Request), expect.any(Array)]);
    expect(seen.lambda).toEqual(['evt_1', expect.objectContaining({ rawPath: '/webhooks' }), lambdaContext]);
    expect(seen.azure).toEqual(['evt_1', expect.objectContaining({ method: 'POST' }), expect.objectContaining({ invocationId: '1', functionName: 'webhooks' })]);
    expect(seen.h3![0]).toBe('evt_1');
    expect(seen.h3![1]).toHaveProperty('req.method', 'POST');
    expect(seen.h3![2]).toHaveProperty('webhook.id', 'evt_1');
  });
});
