/**
 * Each entry on a real listening server on 127.0.0.1 serving many tenants at
 * `/webhooks/<tenant>`, answering by itself with `on`, the tenant read from
 * the route the way that host offers it. The Lambda entry gets an HTTP API
 * event whose `pathParameters` carry the tenant, as API Gateway fills them
 * for a route `/webhooks/{tenant}`; the Azure entry a request whose `params`
 * do, as the Functions host fills them for a route `webhooks/{tenant}`; the
 * h3 entry reads h3's router param, decoded.
 */
import { createAdaptorServer } from '@hono/node-server';
import express from 'express';
import Fastify from 'fastify';
import { getRouterParam } from 'h3';
import { Hono } from 'hono';
import { createServer, type Server } from 'node:http';
import { verifyWebhook as azureWebhook } from '../../adapters/azure.js';
import { verifyWebhook as expressWebhook } from '../../adapters/express.js';
import { verifyWebhook as fastifyWebhook } from '../../adapters/fastify.js';
import { verifyWebhook as fetchWebhook } from '../../adapters/fetch.js';
import { verifyWebhook as h3Webhook } from '../../adapters/h3.js';
import { verifyWebhook as honoWebhook } from '../../adapters/hono.js';
import { verifyWebhook as lambdaWebhook, type LambdaWebhookEvent } from '../../adapters/lambda.js';
import type { EntryOptions, HandlerOptions, TenantsOptions } from '../../src/index.js';
import { serveAzure, serveH3, serveLambda } from './adapter-servers.js';
import { serveNode, type ServedApp } from './http-harness.js';

/** What every tenant server takes: the receiver's options with `on` and its options, and `tenants` but for `of`, which each server reads from its route. */
export type TenantServerOptions = EntryOptions & HandlerOptions & { readonly tenants: Omit<TenantsOptions<never>, 'of'> };

export type TenantServer = (options: TenantServerOptions) => Promise<ServedApp>;

export const TENANT_SERVERS: Readonly<Record<'express' | 'hono' | 'fastify' | 'fetch' | 'lambda' | 'azure' | 'h3', TenantServer>> = {
  express: (options) =>
    serveNode(createServer(express().post('/webhooks/:tenant', expressWebhook({ ...options, tenants: { ...options.tenants, of: (req) => req.params.tenant } })))),
  hono: (options) => {
    const app = new Hono().post('/webhooks/:tenant', honoWebhook({ ...options, tenants: { ...options.tenants, of: (c) => c.req.param('tenant') } }));
    return serveNode(createAdaptorServer({ fetch: app.fetch }) as Server);
  },
  fastify: async (options) => {
    const app = Fastify();
    await app.register(
      fastifyWebhook({ ...options, path: '/webhooks/:tenant', tenants: { ...options.tenants, of: (request) => (request.params as { tenant?: string }).tenant } }),
    );
    return { url: await app.listen({ port: 0, host: '127.0.0.1' }), close: () => app.close() };
  },
  fetch: (options) => {
    const webhook = fetchWebhook({ ...options, tenants: { ...options.tenants, of: (request) => new URL(request.url).pathname.split('/')[2] } });
    return serveNode(createAdaptorServer({ fetch: webhook }) as Server);
  },
  lambda: (options) => {
    const webhook = lambdaWebhook({ ...options, tenants: { ...options.tenants, of: (event) => ('pathParameters' in event ? event.pathParameters?.tenant : undefined) } });
    return serveLambda('http-api', webhook, (event, path) => {
      const tenant = /^\/webhooks\/([^/?]+)/.exec(path)?.[1];
      return { ...event, pathParameters: tenant === undefined ? undefined : { tenant: decodeURIComponent(tenant) } } as LambdaWebhookEvent;
    });
  },
  azure: (options) => {
    const webhook = azureWebhook({ ...options, tenants: { ...options.tenants, of: (request) => request.params.tenant } });
    return serveAzure(webhook, (path): Record<string, string> => {
      const tenant = /^\/webhooks\/([^/?]+)/.exec(path)?.[1];
      return tenant === undefined ? {} : { tenant: decodeURIComponent(tenant) };
    });
  },
  h3: (options) => serveH3(h3Webhook({ ...options, tenants: { ...options.tenants, of: (event) => getRouterParam(event, 'tenant', { decode: true }) } })),
};
