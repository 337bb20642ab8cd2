/**
 * Hono on a runtime that may cut work left after the response (Workers):
 * the claim's settlement goes to `executionCtx.waitUntil`, and the response
 * does not wait for it.
 */
import { Hono } from 'hono';
import type { ExecutionContext } from 'hono';
import { describe, expect, it } from 'vitest';
import { verifyWebhook } from '../../adapters/hono.js';
import { MemoryDedupStore, type DedupStore } from '../../src/index.js';
import { now, SECRET, signedRequest } from '../helpers/signed-request.js';

describe('hono adapter with an execution context', () => {
  it.each([
    ['a route', (dedup: DedupStore) => new Hono().post('/webhooks', verifyWebhook({ secret: SECRET, now, dedup: { store: dedup } }), (c) => c.body(null, 204))],
    ['the handlers of on', (dedup: DedupStore) => new Hono().post('/webhooks', verifyWebhook({ secret: SECRET, now, dedup: { store: dedup }, on: { 'call.missed': () => {} } }))],
  ])('hands the settlement to waitUntil and answers without waiting for it, with %s', async (_name, appOn) => {
    const store = new MemoryDedupStore();
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    let completed = false;
    const dedup = {
      begin: store.begin.bind(store),
      release: store.release.bind(store),
      renew: store.renew.bind(store),
      complete: async (key: string, token: string, retentionMs: number) => {
        await gate;
        completed = await store.complete(key, token, retentionMs);
        return completed;
      },
    };
    const app = appOn(dedup);
    const waiting: Array<Promise<unknown>> = [];
    const executionCtx: ExecutionContext = {
      waitUntil: (promise) => waiting.push(promise),
      passThroughOnException: () => {},
      props: {},
    };
    const request = (): Request => {
      const { body, headers } = signedRequest();
      return new Request('http://receiver.test/webhooks', { method: 'POST', body, headers });
    };
    try {
      const response = await app.fetch(request(), {}, executionCtx);
      expect(response.status).toBe(204);
      expect(waiting).toHaveLength(1);
      expect(completed).toBe(false);

      open();
      await expect(waiting[0]).resolves.toBe(undefined);
      expect(completed).toBe(true);
      expect((await app.fetch(request(), {}, executionCtx)).status).toBe(200);
    } finally {
      store.close();
    }
  });
});
