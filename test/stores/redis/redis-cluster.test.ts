/**
 * RedisDedupStore on a Redis Cluster of three masters, through ioredis
 * `Cluster` and node-redis `createCluster`: the whole contract, with ids
 * spread over every master. A plain event's script touches one key, and an
 * ordered event's three that share its object's hash tag, so each call has
 * one hash slot whatever the prefix, but for one that starts a tag with `{}`.
 */
import type { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventOrder } from '../../../src/core/event-order.js';
import { RedisDedupStore, type RedisConnection } from '../../../src/stores/redis/index.js';
import { claim, describeDedupContract } from '../../helpers/dedup-store-contract.js';
import { claimInOrder, describeOrderingContract } from '../../helpers/ordering-store-contract.js';
import { PrivateRedisCluster } from '../../helpers/private-redis-cluster.js';
import { connectIoredisCluster, connectNodeRedisCluster, randomPrefix, redisStoreHarness, type NodeRedisCluster } from '../../helpers/redis-clients.js';

/** The order of an event of `object` at `version`, scoped as receivers scope it. */
const at = (version: number, object = 'msg_1'): EventOrder => ({ key: `scopescopescope1:${object}`, version });

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

/** Each client's cluster, by name, for the tests run through both. */
const CLIENTS: Array<[name: string, connection: () => RedisConnection]> = [
  ['ioredis', () => ioredis],
  ['node-redis', () => nodeRedis as RedisConnection],
];

describe('RedisDedupStore on a cluster', () => {
  it.each(CLIENTS)('spreads ids over every master and runs each operation on the master of its key (%s)', async (_name, connection) => {
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
      const ordered = await claimInOrder(store, 'evt_4', at(4));
      expect(await store.completeInOrder('evt_4', at(4), ordered.token, 60_000)).toBe(true);
      expect((await claimInOrder(store, 'evt_5', at(3))).stale).toBe(true);
    }
  });

  it.each(CLIENTS)("keeps an object's keys in one slot whatever braces its key holds, and spreads objects over every master (%s)", async (_name, connection) => {
    const keyPrefix = randomPrefix();
    const store = new RedisDedupStore(connection(), { keyPrefix });
    const objects = ['{msg}', '}{', '{', 'a{b}c', '{}', ...Array.from({ length: 25 }, (_, i) => `msg_${i}`)];
    for (const object of objects) {
      // The first event, done, records the version; the second, leased, holds the object.
      const first = await claimInOrder(store, `evt_${object}_1`, at(1, object));
      expect(await store.completeInOrder(`evt_${object}_1`, at(1, object), first.token, 60_000)).toBe(true);
      expect((await claimInOrder(store, `evt_${object}_2`, at(2, object))).stale).toBe(false);
    }
    const masters = ioredis.nodes('master');
    const keysPerMaster = await Promise.all(masters.map((node) => node.keys(`${keyPrefix}*`)));
    for (const keys of keysPerMaster) expect(keys.length).toBeGreaterThan(0);
    const slots = await Promise.all(keysPerMaster.flat().map(async (key) => [key, await masters[0]!.call('CLUSTER', 'KEYSLOT', key)] as const));
    expect(slots).toHaveLength(objects.length * 4);
    for (const object of objects) {
      const ends = [`eevt_${object}_1`, `eevt_${object}_2`, `v${at(0, object).key}`, `l${at(0, object).key}`];
      const own = slots.filter(([key]) => ends.some((end) => key.endsWith(end)));
      expect(own, object).toHaveLength(4);
      expect(new Set(own.map(([, slot]) => slot)).size, object).toBe(1);
    }
  });

  it.each(['{tenant_1}:', 'svc{dedup:'])('orders the events of many objects under a keyPrefix that holds braces (%s)', async (start) => {
    const store = new RedisDedupStore(ioredis, { keyPrefix: start + randomPrefix() });
    for (let i = 0; i < 10; i++) {
      const [id, older] = [`evt_${i}`, `evt_${i}_older`];
      const held = await claimInOrder(store, id, at(5, `msg_${i}`));
      expect(await store.renewInOrder(id, at(5, `msg_${i}`), held.token, 60_000)).toBe(true);
      expect(await store.completeInOrder(id, at(5, `msg_${i}`), held.token, 60_000)).toBe(true);
      const stale = await claimInOrder(store, older, at(4, `msg_${i}`));
      expect(stale.stale).toBe(true);
      expect(await store.releaseInOrder(older, at(4, `msg_${i}`), stale.token)).toBe(true);
    }
  });

  it.each(CLIENTS)('is refused by Redis for an ordered event under a keyPrefix that starts a hash tag with {}, as documented (%s)', async (_name, connection) => {
    const store = new RedisDedupStore(connection(), { keyPrefix: `{}${randomPrefix()}` });
    await expect(store.beginInOrder('evt_1', at(1), 60_000)).rejects.toThrow(/CROSSSLOT/);
    expect((await store.begin('evt_1', 60_000)).state).toBe('claimed');
  });
});
