/**
 * One receiver instance: a real Express, Hono (on @hono/node-server) or
 * Fastify server on 127.0.0.1 with the webhook route behind `verifyWebhook`.
 * Its handler fails at random before its side effect and otherwise records
 * it after a short random delay, so deliveries of the same event really
 * overlap; a share of calls may run for several leases, so the claim must
 * be renewed and the sender gives up waiting on them.
 */
import { createServer, type Server } from 'node:http';
import { createAdaptorServer } from '@hono/node-server';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import { verifyWebhook as expressWebhook } from '../../../adapters/express.js';
import { verifyWebhook as fastifyWebhook } from '../../../adapters/fastify.js';
import { verifyWebhook as honoWebhook } from '../../../adapters/hono.js';
import type { DedupStore, ReceiverOptions, SingleEndpoint } from '../../../src/index.js';
import { serveNode, type ServedApp } from '../http-harness.js';
import { SECRET, now } from '../signed-request.js';
import { draw } from './seeded-random.js';
import type { SideEffectLedger } from './side-effect-ledger.js';

/** Share of handler calls that throw; as many again answer 500. */
const THROW_RATE = 0.125;
const ANSWER_500_RATE = 0.125;
const MAX_DELAY_MS = 3;

export type Framework = 'express' | 'hono' | 'fastify';

export interface ReceiverInstanceOptions {
  readonly framework?: Framework;
  readonly dedup: DedupStore;
  readonly ledger: SideEffectLedger;
  readonly seed: number;
  /** Longer than any handler run here unless `slowShare` is set. */
  readonly leaseMs: number;
  /** Share of handler calls that run for three leases before their fate. @default 0 */
  readonly slowShare?: number;
  /** Told about a store failure the receiver could not recover from. */
  readonly onStoreError?: (error: unknown) => void;
}

export interface ReceiverInstance {
  /** The webhook route's URL. */
  readonly url: string;
  close(): Promise<void>;
}

type Handler = (id: string) => Promise<204 | 500>;

export async function startReceiverInstance(options: ReceiverInstanceOptions): Promise<ReceiverInstance> {
  const { framework = 'express', dedup, leaseMs, onStoreError } = options;
  const webhookOptions: ReceiverOptions & SingleEndpoint = { secret: SECRET, now, dedup: { store: dedup, leaseMs, onError: onStoreError } };
  const served = await serve[framework](webhookOptions, handler(options));
  return { url: `${served.url}/webhooks`, close: served.close };
}

/** The route's work: a delay, then a throw, a 500, or the side effect and 204, as the seed decides per call. */
function handler({ ledger, seed, leaseMs, slowShare = 0 }: ReceiverInstanceOptions): Handler {
  return async (id) => {
    const call = ledger.call(id);
    const slow = draw(seed, 'slow', id, call) < slowShare;
    const delay = slow ? 3 * leaseMs : Math.floor(draw(seed, 'delay', id, call) * (MAX_DELAY_MS + 1));
    await new Promise((resolve) => setTimeout(resolve, delay));
    const fate = draw(seed, 'fate', id, call);
    if (fate < THROW_RATE) {
      ledger.thrown += 1;
      // Each framework answers 500 for a handler that throws.
      throw new Error('the handler failed');
    }
    if (fate < THROW_RATE + ANSWER_500_RATE) {
      ledger.answered500 += 1;
      return 500;
    }
    ledger.process(id);
    return 204;
  };
}


const serve: Record<Framework, (options: ReceiverOptions & SingleEndpoint, handle: Handler) => Promise<ServedApp>> = {
  async express(options, handle) {
    const app = express();
    app.post('/webhooks', expressWebhook(options), async (req, res) => {
      res.status(await handle(req.webhook.id)).end();
    });
    return serveNode(createServer(app));
  },

  async hono(options, handle) {
    const app = new Hono();
    app.onError((_error, c) => c.text('the handler failed', 500));
    app.post('/webhooks', honoWebhook(options), async (c) => c.body(null, await handle(c.var.webhook.id)));
    return serveNode(createAdaptorServer({ fetch: app.fetch }) as Server);
  },

  async fastify(options, handle) {
    // Like closeServer for the others: a connection the sender opened but never used would hold close() up.
    const app = Fastify({ forceCloseConnections: true });
    await app.register(
      fastifyWebhook({
        ...options,
        routes(webhooks) {
          webhooks.post('/webhooks', async (request, reply) => reply.code(await handle(request.webhook.id)).send());
        },
      }),
    );
    const url = await app.listen({ port: 0, host: '127.0.0.1' });
    return { url, close: () => app.close() };
  },
};
