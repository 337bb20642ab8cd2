/**
 * Each adapter on a real listening server on 127.0.0.1, its webhook route at
 * /webhooks answering the status a `RouteSpy` gives, or, with `on`, the
 * adapter answering there by itself; the framework's own defaults everywhere
 * else (Hono's error handler, which logs, included). The Fetch entry is
 * served through @hono/node-server's bridge, the Lambda entry through a
 * bridge that turns each request into the event of a Lambda HTTP source,
 * the Azure entry through one that builds Azure's own `HttpRequest` and
 * `InvocationContext`, as the Functions host hands them over, the h3 entry
 * on an h3 app of either major behind Node's HTTP server.
 */
import { HttpRequest, InvocationContext, type HttpResponseInit } from '@azure/functions';
import { createAdaptorServer } from '@hono/node-server';
import express from 'express';
import Fastify, { type FastifyInstance } from 'fastify';
import { H3, toNodeHandler } from 'h3';
import { createApp, createRouter, toNodeListener } from 'h3-v1';
import { Hono } from 'hono';
import { Buffer } from 'node:buffer';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { verifyWebhook as expressWebhook, type ExpressWebhookOptions } from '../../adapters/express.js';
import { verifyWebhook as fastifyWebhook, type FastifyEntryOptions } from '../../adapters/fastify.js';
import type { AzureWebhook, AzureWebhookContext } from '../../adapters/azure.js';
import type { FetchWebhook, FetchWebhookContext } from '../../adapters/fetch.js';
import type { H3Webhook, H3WebhookContext } from '../../adapters/h3.js';
import { verifyWebhook as honoWebhook, type HonoWebhookOptions } from '../../adapters/hono.js';
import type { LambdaWebhook, LambdaWebhookContext, LambdaWebhookEvent } from '../../adapters/lambda.js';
import type { EventSchemas, HandlersMode, HandoffMode, SingleEndpoint, WebhookEvent } from '../../src/index.js';
import type { RouteSpy } from './adapter-contract.js';
import { serveNode, type ServedApp } from './http-harness.js';
import { httpResponseOf, lambdaContext, lambdaEvent, type LambdaSource } from './lambda-events.js';

export type { ServedApp };

export function serveExpress(options: ExpressWebhookOptions, route: RouteSpy, framework = express): Promise<ServedApp> {
  const app = framework();
  app.post('/webhooks', expressWebhook(options), async (req, res) => {
    res.status(await route.handle(req.webhook.event, req.webhook.id, req.webhook.stale)).end();
  });
  return serveNode(createServer(app));
}

export function serveHono(options: HonoWebhookOptions, route: RouteSpy): Promise<ServedApp> {
  const app = new Hono();
  app.post('/webhooks', honoWebhook(options), async (c) => c.body(null, (await route.handle(c.var.webhook.event, c.var.webhook.id)) as 204));
  return serveNode(createAdaptorServer({ fetch: app.fetch }) as Server);
}

/** `inRoutes` runs in the plugin's scope before the route is added, as a user's own setup would. */
export async function serveFastify(
  options: FastifyEntryOptions & SingleEndpoint,
  route: RouteSpy,
  inRoutes?: (webhooks: FastifyInstance) => void,
  framework = Fastify,
): Promise<ServedApp> {
  const app = framework();
  await app.register(
    fastifyWebhook({
      ...options,
      routes(webhooks) {
        inRoutes?.(webhooks);
        webhooks.post('/webhooks', async (request, reply) => reply.code(await route.handle(request.webhook.event, request.webhook.id)).send());
      },
    }),
  );
  return { url: await app.listen({ port: 0, host: '127.0.0.1' }), close: () => app.close() };
}

/** Express with `on`: the middleware alone, no route after it. */
export function serveExpressHandlers<S extends EventSchemas>(options: ExpressWebhookOptions<S>): Promise<ServedApp> {
  return serveNode(createServer(express().post('/webhooks', expressWebhook(options))));
}

/** Hono with `on`: the middleware alone, no handler after it. */
export function serveHonoHandlers<S extends EventSchemas>(options: HonoWebhookOptions<S>): Promise<ServedApp> {
  return serveNode(createAdaptorServer({ fetch: new Hono().post('/webhooks', honoWebhook(options)).fetch }) as Server);
}

/** Fastify with `on`: the plugin registers its route at `path` itself. */
export async function serveFastifyHandlers<S extends EventSchemas>(options: FastifyEntryOptions & SingleEndpoint & (HandlersMode<S> | HandoffMode)): Promise<ServedApp> {
  const app = Fastify();
  await app.register(fastifyWebhook({ ...options, path: '/webhooks' }));
  return { url: await app.listen({ port: 0, host: '127.0.0.1' }), close: () => app.close() };
}

/** A Fetch entry, served by Node's HTTP server. */
export function serveFetch(webhook: FetchWebhook): Promise<ServedApp> {
  return serveNode(createAdaptorServer({ fetch: webhook }) as Server);
}

/**
 * A Lambda entry, each request handed to it as the event `source` would send;
 * `routed` adds what the source's routing fills in from the request's path.
 */
export function serveLambda(
  source: LambdaSource,
  webhook: LambdaWebhook,
  routed: (event: LambdaWebhookEvent, path: string) => LambdaWebhookEvent = (event) => event,
): Promise<ServedApp> {
  const server = createServer(async (req, res) => {
    const headers = Object.fromEntries(Object.entries(req.headers).map(([name, value]) => [name, String(value)]));
    const event = routed(lambdaEvent(source, { body: await bodyOf(req), headers }), req.url ?? '/');
    const response = httpResponseOf(source, await webhook(event, lambdaContext));
    res.writeHead(response.status, Object.fromEntries(response.headers)).end(Buffer.from(await response.arrayBuffer()));
  });
  return serveNode(server);
}

/**
 * An Azure entry, each request handed to it as Azure's `HttpRequest` with a
 * fresh `InvocationContext`; `params` gives what the route template reads
 * from the path (`webhooks/{tenant}`). A `jsonBody` answer is sent as JSON.
 */
export function serveAzure(webhook: AzureWebhook, params: (path: string) => Record<string, string> = () => ({})): Promise<ServedApp> {
  let invocations = 0;
  const server = createServer(async (req, res) => {
    const headers = Object.fromEntries(Object.entries(req.headers).map(([name, value]) => [name, String(value)]));
    const url = `http://${req.headers.host ?? '127.0.0.1'}${req.url ?? '/'}`;
    const request = new HttpRequest({ method: req.method ?? 'POST', url, headers, params: params(req.url ?? '/'), body: { bytes: await bytesOf(req) } });
    const answer: HttpResponseInit = await webhook(request, new InvocationContext({ invocationId: String(++invocations), functionName: 'webhooks' }));
    const sent = new Headers(answer.headers as ConstructorParameters<typeof Headers>[0]);
    const body = answer.jsonBody === undefined ? answer.body : JSON.stringify(answer.jsonBody);
    if (answer.jsonBody !== undefined && !sent.has('content-type')) sent.set('content-type', 'application/json');
    res.writeHead(answer.status ?? 200, Object.fromEntries(sent)).end(typeof body === 'string' ? body : body === undefined || body === null ? '' : String(body));
  });
  return serveNode(server);
}

/** The h3 majors the entry is served on. */
export const H3_MAJORS = ['h3 1', 'h3 2'] as const;
export type H3Major = (typeof H3_MAJORS)[number];

/**
 * An h3 entry as the route `POST /webhooks`, and `/webhooks/:tenant`, of an
 * app of h3 `major`, behind Node's HTTP server: h3 2's `H3` with
 * `toNodeHandler`, or h3 1's app and router with `toNodeListener`.
 */
export function serveH3(webhook: H3Webhook, major: H3Major = 'h3 2'): Promise<ServedApp> {
  if (major === 'h3 2') {
    const app = new H3().post('/webhooks', webhook).post('/webhooks/:tenant', webhook);
    return serveNode(createServer(toNodeHandler(app)));
  }
  // h3 1's events are of its own H3Event class, which the entry's types (of h3 2 here) do not name.
  const v1 = webhook as unknown as Parameters<ReturnType<typeof createRouter>['post']>[1];
  const app = createApp().use(createRouter().post('/webhooks', v1).post('/webhooks/:tenant', v1));
  return serveNode(createServer(toNodeListener(app)));
}

/** An h3 entry answering the status `route` gives. */
export const h3Route = (route: RouteSpy) => async (event: WebhookEvent, { id }: H3WebhookContext) => new Response(null, { status: await route.handle(event, id) });

/** An Azure entry answering the status `route` gives. */
export const azureRoute = (route: RouteSpy) => async (event: WebhookEvent, { id }: AzureWebhookContext) => ({ status: await route.handle(event, id) });

/** A Fetch entry answering the status `route` gives. */
export const fetchRoute = (route: RouteSpy) => async (event: WebhookEvent, { id }: FetchWebhookContext) =>
  new Response(null, { status: await route.handle(event, id) });

/** A Lambda entry answering the status `route` gives. */
export const lambdaRoute = (route: RouteSpy) => async (event: WebhookEvent, { id }: LambdaWebhookContext) => ({
  statusCode: await route.handle(event, id),
  body: '',
});

async function bytesOf(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

async function bodyOf(req: IncomingMessage): Promise<string> {
  return (await bytesOf(req)).toString('utf8');
}
