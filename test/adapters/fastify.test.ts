import type { default as fastify, FastifyInstance, FastifyRequest } from 'fastify';
import { Buffer } from 'node:buffer';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { verifyWebhook } from '../../adapters/fastify.js';
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
import { beginAnswerThenThrow, expectBegunAnswerEnded } from '../helpers/begun-answer.js';
import { settleContract } from '../helpers/settle-contract.js';
import { fetchHarness, expect413WhileSending } from '../helpers/http-harness.js';
import { SECRET, now, signedRequest } from '../helpers/signed-request.js';
import { FASTIFY_MAJORS } from '../helpers/host-majors.js';
import { WebhookOptionsError } from '../../src/base/options-error.js';

type Fastify = typeof fastify;

/** A `Fastify` app with the webhook route at /webhooks, registered through the plugin. */
async function webhookApp(Fastify: Fastify, { options, route, customErrors }: HarnessSpec): Promise<FastifyInstance> {
  const app = Fastify();
  await app.register(
    verifyWebhook({
      ...options,
      onError: customErrors
        ? async (error, _request, reply) => {
            await reply.code(CUSTOM_ERROR_STATUS).send(customErrorBody(error.code));
          }
        : undefined,
      routes(webhooks) {
        webhooks.post('/webhooks', async (request, reply) => {
          expectTypeOf(request.webhook).toEqualTypeOf<WebhookDelivery>();
          expectTypeOf(request.webhook.event).toEqualTypeOf<WebhookEvent>();
          expectTypeOf(request.webhook.id).toEqualTypeOf<string>();
          return reply.code(await route.handle(request.webhook.event, request.webhook.id, request.webhook.stale)).send();
        });
      },
    }),
  );
  return app;
}

/** Sends through `app.inject()`: Fastify's own request path, no socket. */
function injectHarness(app: FastifyInstance): AdapterHarness {
  return {
    post: async ({ body, headers }) => {
      const response = await app.inject({ method: 'POST', url: '/webhooks', payload: body, headers });
      const hasBody = response.statusCode !== 204;
      return new Response(hasBody ? response.rawPayload : null, {
        status: response.statusCode,
        headers: response.headers as Record<string, string>,
      });
    },
    close: () => app.close(),
  };
}

async function listeningHarness(app: FastifyInstance): Promise<AdapterHarness> {
  return fetchHarness(await app.listen({ port: 0, host: '127.0.0.1' }), () => app.close());
}

describe.each(FASTIFY_MAJORS)('fastify adapter on %s through inject()', (_major, Fastify) => {
  adapterContract(async (spec) => injectHarness(await webhookApp(Fastify, spec)));
  orderingContract(async (spec) => injectHarness(await webhookApp(Fastify, spec)));

  it('leaves JSON parsing of routes outside the plugin alone', async () => {
    const route = new RouteSpy();
    const app = await webhookApp(Fastify, { options: { secret: SECRET, now }, route });
    app.post('/orders', async (request) => ({ echoed: request.body }));
    const order = await app.inject({ method: 'POST', url: '/orders', payload: { sku: 'A1' } });
    expect(order.json()).toEqual({ echoed: { sku: 'A1' } });
    expect((await injectHarness(app).post(signedRequest())).status).toBe(204);
    expect(route.calls).toHaveLength(1);
  });
});

describe.each(FASTIFY_MAJORS)('fastify adapter on %s over HTTP', (_major, Fastify) => {
  adapterContract(async (spec) => listeningHarness(await webhookApp(Fastify, spec)));
  disconnectContract(async (spec) => listeningHarness(await webhookApp(Fastify, spec)));
  settleContract(async (spec) => listeningHarness(await webhookApp(Fastify, spec)));

  it('answers 413 while a chunked body past the limit is still being sent', async () => {
    const route = new RouteSpy();
    const app = await webhookApp(Fastify, { options: { secret: SECRET, now, maxPayloadBytes: 64 * 1024 }, route });
    try {
      const url = await app.listen({ port: 0, host: '127.0.0.1' });
      await expect413WhileSending(`${url}/webhooks`, signedRequest().headers);
      expect(route.calls).toEqual([]);
    } finally {
      await app.close();
    }
  });

  it('tells onHandlerError when the handoff failed to record an event, and answers 503 handoff_failed', async () => {
    const down = new Error('queue down');
    const heard: unknown[] = [];
    const app = Fastify();
    await app.register(
      verifyWebhook({ secret: SECRET, now, path: '/webhooks', handoff: { hand: () => Promise.reject(down) }, onHandlerError: (error) => void heard.push(error) }),
    );
    try {
      const url = await app.listen({ port: 0, host: '127.0.0.1' });
      const response = await fetch(`${url}/webhooks`, { method: 'POST', ...signedRequest() });
      expect(response.status).toBe(503);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe('handoff_failed');
      expect(heard).toEqual([down]);
    } finally {
      await app.close();
    }
  });
});

/**
 * An app whose webhook scope runs a hook at `stage` before its route, which answers 204: both record what
 * `read` makes of the request in `seen` (by default the Content-Type they see), the hook as `[stage, …]`,
 * the route as `[webhook.id, …]`.
 */
async function hookedApp(
  Fastify: Fastify,
  stage: 'preParsing' | 'preValidation',
  seen: unknown[],
  read: (request: FastifyRequest) => unknown[] = (request) => [request.headers['content-type']],
): Promise<FastifyInstance> {
  const app = Fastify();
  await app.register(
    verifyWebhook({
      secret: SECRET,
      now,
      routes(webhooks) {
        webhooks.addHook(stage, async (request: FastifyRequest) => {
          seen.push([stage, ...read(request)]);
        });
        webhooks.post('/webhooks', async (request, reply) => {
          seen.push([request.webhook.id, ...read(request)]);
          return reply.code(204).send();
        });
      },
    }),
  );
  return app;
}

/** Injects a signed delivery of `id` sent with Content-Type `type`; answers its status. */
async function postWithType(app: FastifyInstance, id: string, type: string): Promise<number> {
  const { body, headers } = signedRequest({ id });
  return (await app.inject({ method: 'POST', url: '/webhooks', payload: body, headers: { ...headers, 'content-type': type } })).statusCode;
}

describe.each(FASTIFY_MAJORS)('fastify adapter on %s, past the shared contract', (_major, Fastify) => {
  it.each(['', 'nonsense', 'application/json; charset=utf-8'])(
    'verifies a delivery sent with Content-Type %j and gives that header as sent to your preValidation hooks and the route',
    async (type) => {
      const seen: unknown[] = [];
      const app = await hookedApp(Fastify, 'preValidation', seen);
      try {
        expect(await postWithType(app, 'evt_1', type)).toBe(204);
        expect(seen).toEqual([
          ['preValidation', type],
          ['evt_1', type],
        ]);
      } finally {
        await app.close();
      }
    },
  );

  it('gives your preParsing hooks the verified delivery and the raw body, as the route gets them', async () => {
    const seen: unknown[] = [];
    const app = await hookedApp(Fastify, 'preParsing', seen, (request) => [request.webhook.id, request.body]);
    try {
      const { body, headers } = signedRequest({ id: 'evt_1' });
      expect((await app.inject({ method: 'POST', url: '/webhooks', payload: body, headers })).statusCode).toBe(204);
      expect(seen).toEqual([
        ['preParsing', 'evt_1', Buffer.from(body)],
        ['evt_1', 'evt_1', Buffer.from(body)],
      ]);
    } finally {
      await app.close();
    }
  });

  it('ends the answer an onError began before it threw, rather than write a second one', async () => {
    const route = new RouteSpy();
    const app = Fastify();
    await app.register(
      verifyWebhook({
        secret: SECRET,
        now,
        onError: (_error, _request, reply) => beginAnswerThenThrow(reply.raw),
        routes(webhooks) {
          webhooks.post('/webhooks', async (request, reply) => reply.code(await route.handle(request.webhook.event, request.webhook.id)).send());
        },
      }),
    );
    try {
      await expectBegunAnswerEnded(await app.listen({ port: 0, host: '127.0.0.1' }), route);
    } finally {
      await app.close();
    }
  });
});

describe('fastify adapter on fastify 5', () => {
  // Fastify 4 has no request.mediaType to tell a well-formed type by: there the header is hidden until preValidation.
  it('leaves a well-formed Content-Type in place for your preParsing hooks, hiding only one Fastify would refuse', async () => {
    const seen: unknown[] = [];
    const app = await hookedApp(FASTIFY_MAJORS[0]![1], 'preParsing', seen);
    try {
      expect([await postWithType(app, 'evt_1', 'application/json; charset=utf-8'), await postWithType(app, 'evt_2', 'nonsense')]).toEqual([204, 204]);
      expect(seen).toEqual([
        ['preParsing', 'application/json; charset=utf-8'],
        ['evt_1', 'application/json; charset=utf-8'],
        ['preParsing', undefined],
        ['evt_2', 'nonsense'],
      ]);
    } finally {
      await app.close();
    }
  });
});

describe('fastify adapter options', () => {
  it('throws TypeError at creation for an onError that is no function', () => {
    expect(() => verifyWebhook({ secret: SECRET, onError: 'log' as never, routes: () => {} })).toThrow(TypeError);
  });

  const routes = () => {};
  const on = { 'call.missed': () => {} };
  const mount = 'svc-webhooks: give routes (a function that registers your webhook routes) or path (with on or handoff), exactly one of them';
  it.each([
    ['routes and path', { routes, path: '/webhooks', on }, mount],
    ['a path that is no string', { path: 7, on }, 'svc-webhooks: path must be a string, the webhook route'],
    ['a path without on or handoff', { path: '/webhooks' }, 'svc-webhooks: say what runs for each delivery with exactly one of on and handoff; given: none'],
    ['a path with both on and handoff', { path: '/webhooks', on, handoff: { hand: async () => {} } }, 'svc-webhooks: say what runs for each delivery with exactly one of on and handoff; given: on and handoff'],
    ['on without path', { on }, mount],
    ['routes with on', { routes, on }, 'svc-webhooks: routes take neither on nor handoff: with them, give path, where the plugin answers itself'],
    ['routes that is no function', { routes: '/webhooks' }, 'svc-webhooks: routes must be a function that registers the webhook routes'],
    ['schemas with routes', { routes, schemas: {} }, 'svc-webhooks: schemas takes effect only with on'],
    ['onHandlerError with routes', { routes, onHandlerError: () => {} }, 'svc-webhooks: onHandlerError takes effect only with on, handoff or a handler'],
  ])('throws TypeError at creation for %s, saying what to give', (_name, mount, message) => {
    expect(() => verifyWebhook({ secret: SECRET, ...mount } as never)).toThrow(new WebhookOptionsError(message));
  });
});
