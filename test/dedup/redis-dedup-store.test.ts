import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BeginResult } from '../../src/stores/dedup-store.js';
import { RedisDedupStore, type RedisConnection } from '../../src/stores/redis/index.js';
import { claim, describeDedupContract } from './contract.js';
import { connectIoredis, connectNodeRedis, randomPrefix, redisStoreHarness, redisUrl, type NodeRedis } from './redis-clients.js';

const url = redisUrl();
let ioredis: Redis;
let nodeRedis: NodeRedis;

beforeAll(async () => {
  ioredis = await connectIoredis(url);
  nodeRedis = await connectNodeRedis(url);
}, 20_000);

afterAll(async () => {
  ioredis?.disconnect();
  await nodeRedis?.close();
});

describeDedupContract('RedisDedupStore via ioredis', redisStoreHarness(() => ioredis));
describeDedupContract('RedisDedupStore via node-redis', redisStoreHarness(() => nodeRedis));

describe('RedisDedupStore: connections', () => {
  it('works through the documented one-liners', async () => {
    const viaIoredis = new RedisDedupStore((args) => ioredis.call(...args), { keyPrefix: randomPrefix() });
    const viaNodeRedis = new RedisDedupStore((args) => nodeRedis.sendCommand(args), { keyPrefix: randomPrefix() });
    for (const store of [viaIoredis, viaNodeRedis]) {
      const token = await claim(store, 'evt_1');
      expect(await store.complete('evt_1', token, 60_000)).toBe(true);
      expect(await store.begin('evt_1', 60_000)).toEqual({ state: 'done' });
    }
  });

  it('throws a TypeError for anything else, or for bad options', () => {
    for (const bad of [null, undefined, {}, 'redis://127.0.0.1:6379']) {
      expect(() => new RedisDedupStore(bad as unknown as RedisConnection)).toThrow(TypeError);
    }
    expect(() => new RedisDedupStore(ioredis, { keyPrefix: 5 as unknown as string })).toThrow(TypeError);
    expect(() => new RedisDedupStore(ioredis, { commandTimeoutMs: 0 })).toThrow(TypeError);
    // Past 2^31 - 1 ms a Node timer fires at once: every command would time out.
    expect(() => new RedisDedupStore(ioredis, { commandTimeoutMs: 2 ** 31 })).toThrow(TypeError);
  });

  it('rejects an answer it does not expect rather than reading it as a claim', async () => {
    for (const reply of [null, '', 'OK', 3]) {
      const store = new RedisDedupStore(async () => reply);
      await expect(store.begin('evt_1', 1000)).rejects.toMatchObject({ code: 'dedup_unavailable' });
    }
  });
});

describe('RedisDedupStore: keys', () => {
  it('keeps the lease and the done marker under the prefix, with expiry', async () => {
    const keyPrefix = randomPrefix();
    const store = new RedisDedupStore(ioredis, { keyPrefix });
    const token = await claim(store, 'evt_1', 30_000);
    expect(await ioredis.get(`${keyPrefix}evt_1`)).toBe(token);
    expect(await ioredis.pttl(`${keyPrefix}evt_1`)).toBeGreaterThan(20_000);
    await store.complete('evt_1', token, 4 * 24 * 3600_000);
    expect(await ioredis.get(`${keyPrefix}evt_1`)).toBe('done');
    expect(await ioredis.pttl(`${keyPrefix}evt_1`)).toBeGreaterThan(3 * 24 * 3600_000);
    await ioredis.del(`${keyPrefix}evt_1`);
  });

  it('uses svc-webhooks:dedup: by default', async () => {
    const id = `evt_${randomPrefix()}`;
    const store = new RedisDedupStore(nodeRedis);
    const token = await claim(store, id);
    try {
      expect(await nodeRedis.get(`svc-webhooks:dedup:${id}`)).toBe(token);
    } finally {
      await store.release(id, token);
    }
  });

  it('keeps stores with different prefixes apart', async () => {
    const a = new RedisDedupStore(ioredis, { keyPrefix: randomPrefix() });
    const b = new RedisDedupStore(ioredis, { keyPrefix: randomPrefix() });
    await claim(a, 'evt_1');
    expect((await b.begin('evt_1', 60_000)).state).toBe('claimed');
  });
});

describe('RedisDedupStore: concurrency', () => {
  it('gives exactly one claim to concurrent begins from many connections', async () => {
    const keyPrefix = randomPrefix();
    const clients = await Promise.all(
      Array.from({ length: 16 }, (_, i) => (i % 2 === 0 ? connectIoredis(url) : connectNodeRedis(url))),
    );
    try {
      const stores = clients.map((client) => new RedisDedupStore(client, { keyPrefix }));
      for (let round = 0; round < 20; round++) {
        const id = `evt_${round}`;
        const results: BeginResult[] = await Promise.all(stores.flatMap((store) => [store.begin(id, 60_000), store.begin(id, 60_000)]));
        expect(results.filter((r) => r.state === 'claimed')).toHaveLength(1);
        expect(results.filter((r) => r.state === 'in_progress')).toHaveLength(31);
      }
    } finally {
      await Promise.all(clients.map((client) => ('call' in client ? client.quit() : client.close())));
    }
  }, 20_000);
});
