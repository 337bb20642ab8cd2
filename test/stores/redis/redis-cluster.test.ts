/**
 * RedisDedupStore on a Redis Cluster of three masters, through ioredis
 * `Cluster` and node-redis `createCluster`: the whole contract, with ids
 * spread over every master. Each script touches one key, so each call has
 * one hash slot whatever the prefix.
 */
import type { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisDedupStore, type RedisConnection } from '../../../src/stores/redis/index.js';
import { claim, describeDedupContract } from '../../helpers/dedup-store-contract.js';
import { claimInOrder, describeOrderingContract } from '../../helpers/ordering-store-contract.js';
import { PrivateRedisCluster } from '../../helpers/private-redis-cluster.js';
import { connectIoredisCluster, connectNodeRedisCluster, randomPrefix, redisStoreHarness, type NodeRedisCluster } from '../../helpers/redis-clients.js';

let cluster: PrivateRedisCluster;
let ioredis: Cluster;
let nodeRedis: NodeRedisCluster;

beforeAll(async () => {
  cluster = await PrivateRedisCluster.start();
  ioredis = await connectIoredisCluster(cluster.ports);
  nodeRedis = await connectNodeRedisCluster(cluster.ports);
}, 60_000);

afterAll(async () => {
  ioredis?.disconnect();
  await nodeRedis?.close();
  await cluster?.close();
});

describeDedupContract('RedisDedupStore on a cluster via ioredis Cluster', redisStoreHarness(() => ioredis));
describeOrderingContract('RedisDedupStore on a cluster via ioredis Cluster', redisStoreHarness(() => ioredis));
describeDedupContract('RedisDedupStore on a cluster via node-redis createCluster', redisStoreHarness(() => nodeRedis));
describeOrderingContract('RedisDedupStore on a cluster via node-redis createCluster', redisStoreHarness(() => nodeRedis));

describe('RedisDedupStore on a cluster', () => {
  it.each([
    ['ioredis', () => ioredis as RedisConnection],
    ['node-redis', () => nodeRedis as RedisConnection],
  ])('spreads ids over every master and runs each operation on the master of its key (%s)', async (_name, connection) => {
    const keyPrefix = randomPrefix();
    const store = new RedisDedupStore(connection(), { keyPrefix });
    const ids = Array.from({ length: 30 }, (_, i) => `evt_${i}`);
    const tokens = await Promise.all(ids.map((id) => claim(store, id)));
    const masters = ioredis.nodes('master');
    expect(masters).toHaveLength(3);
    const keysPerMaster = await Promise.all(masters.map((node) => node.keys(`${keyPrefix}*`)));
    for (const keys of keysPerMaster) expect(keys.length).toBeGreaterThan(0);
    expect(keysPerMaster.flat().sort()).toEqual(ids.map((id) => keyPrefix + id).sort());
    for (const [i, id] of ids.entries()) {
      expect(await store.renew(id, tokens[i]!, 60_000)).toBe(true);
      expect(await store.complete(id, tokens[i]!, 60_000)).toBe(true);
      expect(await store.begin(id, 60_000)).toEqual({ state: 'done' });
    }
  });

  it('works through the documented one-liners for a cluster', async () => {
    const viaIoredis = new RedisDedupStore((args) => ioredis.call(...args), { keyPrefix: randomPrefix() });
    const viaNodeRedis = new RedisDedupStore((args, key) => nodeRedis.sendCommand(key, false, args), { keyPrefix: randomPrefix() });
    for (const store of [viaIoredis, viaNodeRedis]) {
      for (const id of ['evt_1', 'evt_2', 'evt_3']) {
        const token = await claim(store, id);
        expect(await store.complete(id, token, 60_000)).toBe(true);
        expect(await store.begin(id, 60_000)).toEqual({ state: 'done' });
      }
    }
  });
});
