/**
 * A Redis that dies mid-run: the store's operations must reject (so the
 * receiver answers 503 and the sender retries) and work again once Redis is
 * back and the client reconnected. The restarted server has an empty script
 * cache, so recovery also exercises the EVALSHA -> EVAL fallback.
 */
import { verifyAndClaim } from '../../helpers/receiver-steps.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DedupStore } from '../../../src/stores/dedup-store.js';
import { createReceiver } from '../../../src/receive/receiver.js';
import { RedisDedupStore, type RedisConnection } from '../../../src/stores/redis/index.js';
import { claim } from '../../helpers/dedup-store-contract.js';
import { PrivateRedis } from '../../helpers/private-redis.js';
import { connectIoredis, connectNodeRedis, randomPrefix } from '../../helpers/redis-clients.js';
import { now, SECRET, signedRequest } from '../../helpers/signed-request.js';

let redis: PrivateRedis;

beforeAll(async () => {
  redis = await PrivateRedis.start();
}, 15_000);

afterAll(async () => {
  await redis?.close();
});

interface Client {
  readonly connection: RedisConnection;
  close(): Promise<unknown> | void;
}

const clients: Record<string, () => Promise<Client>> = {
  // Queues commands while disconnected: the store's own timeout must reject them.
  'ioredis with its offline queue': async () => {
    const client = await connectIoredis(redis.url, { retryStrategy: () => 50, maxRetriesPerRequest: null });
    return { connection: client, close: () => client.disconnect() };
  },
  // Refuses commands while disconnected.
  'node-redis without offline queue': async () => {
    const client = await connectNodeRedis(redis.url, { disableOfflineQueue: true, socket: { reconnectStrategy: () => 50 } });
    return { connection: client, close: () => client.destroy() };
  },
};

describe('RedisDedupStore when Redis goes down', () => {
  for (const [name, connect] of Object.entries(clients)) {
    it(`rejects while Redis is down and recovers after a restart (${name})`, async () => {
      const client = await connect();
      try {
        const store = new RedisDedupStore(client.connection, { keyPrefix: randomPrefix(), commandTimeoutMs: 500 });
        const held = await claim(store, 'evt_held');

        await redis.kill();
        await expect(store.begin('evt_down', 60_000)).rejects.toThrow();
        await expect(store.complete('evt_held', held, 60_000)).rejects.toThrow();
        await expect(store.release('evt_held', held)).rejects.toThrow();
        const receiver = createReceiver({ secret: SECRET, now, dedup: { store: store } });
        const { body, headers } = signedRequest({ id: 'evt_down' });
        const reception = await verifyAndClaim(receiver, body, headers);
        expect(reception.action === 'respond' && reception.response.status).toBe(503);

        await redis.start();
        await untilAnswering(store, 10_000);
        const token = await claim(store, 'evt_after');
        expect(await store.begin('evt_after', 60_000)).toEqual({ state: 'in_progress' });
        expect(await store.complete('evt_after', token, 60_000)).toBe(true);
        expect(await store.begin('evt_after', 60_000)).toEqual({ state: 'done' });
      } finally {
        await client.close();
        // The next test starts from a running server even if this one failed while it was down.
        await redis.start();
      }
    }, 30_000);
  }
});

/** Retries an operation until the store answers again, for at most `timeoutMs`. */
async function untilAnswering(store: DedupStore, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await store.release('evt_probe', 'no-token');
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}
