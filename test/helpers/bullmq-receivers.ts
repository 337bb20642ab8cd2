/**
 * Each entry (Express, Hono, Fastify, Fetch, Lambda) on a real listening
 * server on 127.0.0.1 with a `handoff` in place of handlers, its webhook
 * route at /webhooks.
 */
import Fastify from 'fastify';
import { verifyWebhook as fastifyWebhook } from '../../adapters/fastify.js';
import { verifyWebhook as fetchWebhook } from '../../adapters/fetch.js';
import { verifyWebhook as lambdaWebhook } from '../../adapters/lambda.js';
import type { DedupOptions, Handoff } from '../../src/index.js';
import { serveExpressHandlers, serveFetch, serveHonoHandlers, serveLambda, type ServedApp } from './adapter-servers.js';

/** What the handoff receivers of the specs take. */
export interface HandoffReceiverOptions {
  readonly secret: string;
  readonly now: () => number;
  readonly dedup: DedupOptions;
  readonly handoff: Handoff;
}

export const HANDOFF_ENTRIES = {
  Express: (options: HandoffReceiverOptions): Promise<ServedApp> => serveExpressHandlers(options),
  Hono: (options: HandoffReceiverOptions): Promise<ServedApp> => serveHonoHandlers(options),
  async Fastify(options: HandoffReceiverOptions): Promise<ServedApp> {
    // Like the Node servers' close, which ends idle connections: a kept-alive one would hold close() up.
    const app = Fastify({ forceCloseConnections: true });
    await app.register(fastifyWebhook({ ...options, path: '/webhooks' }));
    return { url: await app.listen({ port: 0, host: '127.0.0.1' }), close: () => app.close() };
  },
  Fetch: (options: HandoffReceiverOptions): Promise<ServedApp> => serveFetch(fetchWebhook(options)),
  Lambda: (options: HandoffReceiverOptions): Promise<ServedApp> => serveLambda('http-api', lambdaWebhook(options)),
} as const;

export type HandoffEntry = keyof typeof HANDOFF_ENTRIES;
