/**
 * Adapter paths the shared contract does not reach: bodies Express got from
 * elsewhere, a sender gone mid-body, Fastify's plugin scope, and the option
 * checks each adapter adds.
 */
import { once } from 'node:events';
import { createServer } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import express from 'express';
import Fastify, { type FastifyInstance } from 'fastify';
import { describe, expect, it } from 'vitest';
import { verifyWebhook as expressWebhook } from '../../adapters/express.js';
import { verifyWebhook as fastifyWebhook } from '../../adapters/fastify.js';
import { verifyWebhook as honoWebhook } from '../../adapters/hono.js';
import { RouteSpy } from '../helpers/adapter-contract.js';
import { expectOptionMistake } from '../helpers/option-mistake.js';
import { closeServer, listen } from '../helpers/http-harness.js';
import { deliveryOf, SECRET, now, signedRequest } from '../helpers/signed-request.js';
import { WebhookOptionsError } from '../../src/base/options-error.js';

describe('adapter option checks', () => {
  it.each([
    ['express', () => expressWebhook({ secret: SECRET, onError: 'log' as never })],
    ['hono', () => honoWebhook({ secret: SECRET, onError: 'log' as never })],
    ['fastify', () => fastifyWebhook({ secret: SECRET, onError: 'log' as never, routes: () => {} })],
  ])('%s refuses an onError that is no function, naming it', (_name, create) => {
    expect(create).toThrow(new WebhookOptionsError('svc-webhooks: onError must be a function'));
  });

  it.each([
    ['express', (given: unknown) => expressWebhook(given as never)],
    ['hono', (given: unknown) => honoWebhook(given as never)],
    ['fastify', (given: unknown) => fastifyWebhook(given as never)],
  ])('%s refuses options that are no object as an option mistake, before it reads one of them', (_name, create) => {
    for (const given of [undefined, null, SECRET]) expectOptionMistake(() => create(given), 'options with a secret (or tenants) are required');
  });

  it('fastify refuses options without routes or path, saying what each is for', () => {
    expect(() => fastifyWebhook({ secret: SECRET } as never)).toThrow(
      new WebhookOptionsError('svc-webhooks: give routes (a function that registers your webhook routes) or path (with on or handoff), exactly one of them'),
    );
  });
});

describe('express: a body that is not the raw stream', () => {
  /** POSTs a signed request to a route behind `before` and verifyWebhook. */
  async function postBehind(before: express.RequestHandler) {
    const route = new RouteSpy();
    const app = express();
    app.post('/webhooks', before, expressWebhook({ secret: SECRET, now }), async (req, res) => {
      res.status(await route.handle(req.webhook.event, req.webhook.id)).end();
    });
    const server = createServer(app);
    try {
      const { body, headers } = signedRequest();
      const response = await fetch(`${await listen(server)}/webhooks`, { method: 'POST', body, headers });
      const text = await response.text();
      return { status: response.status, body: (text === '' ? undefined : JSON.parse(text)) as { error: { code: string; message: string } }, route };
    } finally {
      await closeServer(server);
    }
  }

  // Express 4's parsers leave {} in req.body when they skip a body: the unread stream still holds it.
  it('reads the stream when a middleware set req.body without reading it', async () => {
    const answer = await postBehind((req, _res, next) => {
      req.body = { parsed: 'elsewhere' };
      next();
    });
    expect(answer.status).toBe(204);
    expect(answer.route.calls.map((call) => call.id)).toEqual(['evt_1']);
  });

  it('answers 500 body_already_parsed when a middleware read the stream and kept nothing', async () => {
    const answer = await postBehind((req, _res, next) => {
      req.resume().once('end', () => next());
    });
    expect(answer.status).toBe(500);
    expect(answer.body.error.code).toBe('body_already_parsed');
    expect(answer.body.error.message).toMatch(/^a body parser consumed the request body before verifyWebhook and kept no raw bytes/);
    expect(answer.route.calls).toEqual([]);
  });
});

describe('express: a sender gone mid-body', () => {
  it('is left unanswered: nothing reaches the route or the error handler', async () => {
    const route = new RouteSpy();
    const errors: unknown[] = [];
    let gone!: () => void;
    const closed = new Promise<void>((resolve) => (gone = resolve));
    const app = express();
    app.post(
      '/webhooks',
      (req, _res, next) => {
        req.once('close', gone);
        next();
      },
      expressWebhook({ secret: SECRET, now }),
      async (req, res) => {
        res.status(await route.handle(req.webhook.event, req.webhook.id)).end();
      },
    );
    app.use((error: unknown, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
      errors.push(error);
      res.status(500).end();
    });
    const server = createServer(app);
    try {
      await listen(server);
      const socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
      socket.on('error', () => {});
      await once(socket, 'connect');
      const { headers } = signedRequest();
      const head = Object.entries({ host: '127.0.0.1', ...headers, 'content-length': '1000' }).map(([name, value]) => `${name}: ${value}\r\n`);
      socket.write(`POST /webhooks HTTP/1.1\r\n${head.join('')}\r\n${' '.repeat(10)}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
      socket.destroy();
      await closed;
      // The middleware's own handling of the close runs in the same turn; let it finish.
      await new Promise((resolve) => setImmediate(resolve));
      expect({ errors, calls: route.calls }).toEqual({ errors: [], calls: [] });
    } finally {
      await closeServer(server);
    }
  });
});

describe('fastify: the plugin scope', () => {
  /** An app with verifyWebhook registered, its scope's routes set up by `routes`. */
  async function fastifyApp(routes: (webhooks: FastifyInstance) => void): Promise<FastifyInstance> {
    const app = Fastify();
    await app.register(fastifyWebhook({ secret: SECRET, now, routes }));
    return app;
  }

  it('declares webhook (the delivery, its id included) on requests, unset until verification', async () => {
    const seen: unknown[] = [];
    const app = await fastifyApp((webhooks) => {
      expect(webhooks.hasRequestDecorator('webhook')).toBe(true);
      webhooks.addHook('onRequest', async (request) => {
        seen.push({ webhook: request.webhook });
      });
      webhooks.post('/webhooks', async (request, reply) => reply.code(200).send({ id: request.webhook.id, delivery: request.webhook }));
    });
    try {
      const { body, headers } = signedRequest();
      const response = await app.inject({ method: 'POST', url: '/webhooks', payload: body, headers });
      expect(response.json()).toEqual({ id: 'evt_1', delivery: deliveryOf() });
      expect(seen).toEqual([{ webhook: null }]);
    } finally {
      await app.close();
    }
  });

  it('verifies a request without a body as an empty one', async () => {
    const route = new RouteSpy();
    const app = await fastifyApp((webhooks) => {
      webhooks.post('/webhooks', async (request, reply) => reply.code(await route.handle(request.webhook.event, request.webhook.id)).send());
    });
    try {
      // Signed over no bytes at all: the signature holds, and the envelope check refuses it.
      const { 'content-type': _type, ...headers } = signedRequest({ body: '' }).headers;
      const response = await app.inject({ method: 'POST', url: '/webhooks', headers });
      expect(response.statusCode).toBe(400);
      expect(response.json()).toMatchObject({ error: { code: 'invalid_payload' } });
      expect(route.calls).toEqual([]);
    } finally {
      await app.close();
    }
  });
});
