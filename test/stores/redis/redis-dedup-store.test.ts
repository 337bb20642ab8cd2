import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebhookDedupError } from '../../../src/core/errors.js';
import type { EventOrder } from '../../../src/core/event-order.js';
import type { BeginResult } from '../../../src/stores/dedup-store.js';
import { RedisDedupStore, type NodeRedisCluster, type RedisConnection } from '../../../src/stores/redis/index.js';
import { claim, describeDedupContract } from '../../helpers/dedup-store-contract.js';
import { claimInOrder, describeOrderingContract } from '../../helpers/ordering-store-contract.js';
import { PrivateRedis } from '../../helpers/private-redis.js';
import { connectIoredis, connectNodeRedis, randomPrefix, redisStoreHarness, redisUrl, type NodeRedis } from '../../helpers/redis-clients.js';
import { silentServer } from '../../helpers/silent-server.js';
import { WebhookOptionsError } from '../../../src/base/options-error.js';

const url = redisUrl();

/** The order of an event of `object` at `version`, scoped as receivers scope it. */
const at = (version: number, object = 'msg_1'): EventOrder => ({ key: `scopescopescope1:${object}`, version });

/**
 * The keys of the ordered event `id` of `msg_1`, leased or done: the event's key is found under the
 * prefix, and the object's keys are named after it, as the class documents.
 */
async function orderedKeys(keyPrefix: string, id: string): Promise<[string, string, string]> {
  const keys = await ioredis.keys(`${keyPrefix}*e${id}`);
  expect(keys).toHaveLength(1);
  const tagged = keys[0]!.slice(0, -`e${id}`.length);
  return [keys[0]!, `${tagged}v${at(0).key}`, `${tagged}l${at(0).key}`];
}
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
describeOrderingContract('RedisDedupStore via ioredis', redisStoreHarness(() => ioredis));
describeDedupContract('RedisDedupStore via node-redis', redisStoreHarness(() => nodeRedis));
describeOrderingContract('RedisDedupStore via node-redis', redisStoreHarness(() => nodeRedis));

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

  it('throws a WebhookOptionsError for anything else, or for bad options', () => {
    for (const bad of [null, undefined, {}, 'redis://127.0.0.1:6379']) {
      expect(() => new RedisDedupStore(bad as unknown as RedisConnection)).toThrow(WebhookOptionsError);
    }
    expect(() => new RedisDedupStore(ioredis, { keyPrefix: 5 as unknown as string })).toThrow(WebhookOptionsError);
    expect(() => new RedisDedupStore(ioredis, { commandTimeoutMs: 0 })).toThrow(WebhookOptionsError);
    // Past 2^31 - 1 ms a Node timer fires at once: every command would time out.
    expect(() => new RedisDedupStore(ioredis, { commandTimeoutMs: 2 ** 31 })).toThrow(WebhookOptionsError);
  });

  it('says in its WebhookOptionsError what is wrong with the connection or the options', () => {
    const noClient = new WebhookOptionsError('svc-webhooks: RedisDedupStore needs an ioredis or node-redis client or cluster, or a sendCommand function');
    // A call or sendCommand that is no function makes no client.
    for (const bad of [null, undefined, 5, {}, { call: 'EVALSHA' }, { sendCommand: true }, { sendCommand: 1, getSlotMaster() {} }]) {
      expect(() => new RedisDedupStore(bad as unknown as RedisConnection)).toThrow(noClient);
    }
    expect(() => new RedisDedupStore(ioredis, null as unknown as object)).toThrow(new WebhookOptionsError('svc-webhooks: RedisDedupStore options must be an object'));
    expect(() => new RedisDedupStore(ioredis, { keyPrefix: 5 as unknown as string })).toThrow(new WebhookOptionsError('svc-webhooks: keyPrefix must be a string'));
    expect(() => new RedisDedupStore(ioredis, { commandTimeoutMs: 0 })).toThrow(
      new WebhookOptionsError(`svc-webhooks: commandTimeoutMs must be a whole number of milliseconds from 1 to ${2 ** 31 - 1}`),
    );
  });

  it('names the duration that is wrong in the WebhookOptionsError of begin, complete and renew', async () => {
    const store = new RedisDedupStore(ioredis, { keyPrefix: randomPrefix() });
    const message = (name: string) => new WebhookOptionsError(`svc-webhooks: ${name} must be a whole number of milliseconds from 1 to ${Number.MAX_SAFE_INTEGER}`);
    await expect(store.begin('evt_1', 0)).rejects.toThrow(message('leaseMs'));
    const token = await claim(store, 'evt_1');
    await expect(store.complete('evt_1', token, 0)).rejects.toThrow(message('retentionMs'));
    await expect(store.renew('evt_1', token, 0)).rejects.toThrow(message('leaseMs'));
    expect(await store.release('evt_1', token)).toBe(true);
  });

  it('rejects an answer it does not expect rather than reading it as a claim', async () => {
    const unexpected = { code: 'dedup_unavailable', message: 'Redis answered the dedup script unexpectedly' };
    for (const reply of [null, '', 'OK', 3, '3', -1, 1.5, true]) {
      const store = new RedisDedupStore(async () => reply);
      await expect(store.begin('evt_1', 1000)).rejects.toMatchObject(unexpected);
      await expect(store.complete('evt_1', 'token', 1000)).rejects.toMatchObject(unexpected);
    }
  });

  it('rejects an unexpected answer to the ordered scripts, and reads 3 as a stale claim from beginInOrder alone', async () => {
    const unexpected = { code: 'dedup_unavailable', message: 'Redis answered the dedup script unexpectedly' };
    for (const reply of [null, '', '03', 4, '4', -1, 2.5, true]) {
      const store = new RedisDedupStore(async () => reply);
      await expect(store.beginInOrder('evt_1', at(1), 1000)).rejects.toMatchObject(unexpected);
      await expect(store.completeInOrder('evt_1', at(1), 'token', 1000)).rejects.toMatchObject(unexpected);
    }
    for (const reply of [3, '3']) {
      const store = new RedisDedupStore(async () => reply);
      expect(await store.beginInOrder('evt_1', at(1), 1000)).toEqual({ state: 'claimed', token: expect.any(String), stale: true });
      await expect(store.renewInOrder('evt_1', at(1), 'token', 1000)).rejects.toMatchObject(unexpected);
    }
  });

  it('reads the integers of a client that answers them as strings (ioredis stringNumbers)', async () => {
    const client = await connectIoredis(url, { stringNumbers: true });
    try {
      const store = new RedisDedupStore(client, { keyPrefix: randomPrefix() });
      const first = await store.begin('evt_1', 60_000);
      expect(first.state).toBe('claimed');
      const token = first.state === 'claimed' ? first.token : '';
      expect(await store.begin('evt_1', 60_000)).toEqual({ state: 'in_progress' });
      expect(await store.renew('evt_1', token, 60_000)).toBe(true);
      expect(await store.renew('evt_1', 'another-token', 60_000)).toBe(false);
      expect(await store.complete('evt_1', 'another-token', 60_000)).toBe(false);
      expect(await store.complete('evt_1', token, 60_000)).toBe(true);
      expect(await store.begin('evt_1', 60_000)).toEqual({ state: 'done' });
      expect(await store.release('evt_1', token)).toBe(false);
      const second = await claim(store, 'evt_2');
      expect(await store.release('evt_2', second)).toBe(true);
      const ordered = await claimInOrder(store, 'evt_3', at(3));
      expect(await store.beginInOrder('evt_4', at(4), 60_000)).toEqual({ state: 'in_progress' });
      expect(await store.completeInOrder('evt_3', at(3), ordered.token, 60_000)).toBe(true);
      expect(await store.beginInOrder('evt_3', at(3), 60_000)).toEqual({ state: 'done' });
      expect((await claimInOrder(store, 'evt_2', at(2))).stale).toBe(true);
    } finally {
      client.disconnect();
    }
  });

  it('sends a node-redis cluster each command with its key first, as a write', async () => {
    const told: Array<[firstKey: string, isReadonly: boolean, command: string]> = [];
    // A cluster's shape over the shared server: what the store tells it is what routes the command.
    const cluster: NodeRedisCluster = {
      getSlotMaster: () => undefined,
      sendCommand: (firstKey, isReadonly, args) => {
        told.push([firstKey, isReadonly, args[0]]);
        return nodeRedis.sendCommand(args);
      },
    };
    const keyPrefix = randomPrefix();
    const store = new RedisDedupStore(cluster, { keyPrefix });
    const token = await claim(store, 'evt_1');
    expect(await store.complete('evt_1', token, 60_000)).toBe(true);
    expect(await store.begin('evt_1', 60_000)).toEqual({ state: 'done' });
    expect(told).toEqual(Array.from({ length: 3 }, () => [`${keyPrefix}evt_1`, false, 'EVALSHA']));
    told.length = 0;
    // An ordered event's commands go by its own key, which carries its object's hash tag.
    const ordered = await claimInOrder(store, 'evt_2', at(2));
    const [eventKey] = await orderedKeys(keyPrefix, 'evt_2');
    expect(await store.renewInOrder('evt_2', at(2), ordered.token, 60_000)).toBe(true);
    expect(await store.releaseInOrder('evt_2', at(2), ordered.token)).toBe(true);
    expect(told).toEqual(Array.from({ length: 3 }, () => [eventKey, false, 'EVALSHA']));
  });
});

describe('RedisDedupStore: script cache and failures', () => {
  let server: PrivateRedis;
  let admin: Redis;

  beforeAll(async () => {
    server = await PrivateRedis.start();
    admin = await connectIoredis(server.url);
    // May run every command but EVALSHA: the store must not get round that by sending EVAL.
    await admin.call('ACL', 'SETUSER', 'no_evalsha', 'on', 'nopass', '~*', '+@all', '-evalsha');
  }, 15_000);

  afterAll(async () => {
    admin?.disconnect();
    await server?.close();
  });

  it('loads its scripts with EVAL when Redis has none cached, then works as usual', async () => {
    await admin.call('SCRIPT', 'FLUSH');
    for (const client of [await connectIoredis(server.url), await connectNodeRedis(server.url)]) {
      try {
        const store = new RedisDedupStore(client, { keyPrefix: randomPrefix() });
        const token = await claim(store, 'evt_1');
        expect(await store.begin('evt_1', 60_000)).toEqual({ state: 'in_progress' });
        expect(await store.renew('evt_1', token, 60_000)).toBe(true);
        expect(await store.complete('evt_1', token, 60_000)).toBe(true);
        expect(await store.begin('evt_1', 60_000)).toEqual({ state: 'done' });
        const released = await claim(store, 'evt_2');
        expect(await store.release('evt_2', released)).toBe(true);
        expect((await store.begin('evt_2', 60_000)).state).toBe('claimed');
        await admin.call('SCRIPT', 'FLUSH');
        const ordered = await claimInOrder(store, 'evt_3', at(3));
        expect(await store.renewInOrder('evt_3', at(3), ordered.token, 60_000)).toBe(true);
        expect(await store.completeInOrder('evt_3', at(3), ordered.token, 60_000)).toBe(true);
        const stale = await claimInOrder(store, 'evt_1', at(1));
        expect(stale.stale).toBe(true);
        expect(await store.releaseInOrder('evt_1', at(1), stale.token)).toBe(true);
      } finally {
        await ('call' in client ? client.quit() : client.close());
      }
      await admin.call('SCRIPT', 'FLUSH');
    }
  });

  it("rejects with the client's own error for any other failure, and does not send the script again", async () => {
    await admin.call('SCRIPT', 'FLUSH');
    const client = await connectIoredis(server.url, { username: 'no_evalsha', password: 'any' });
    try {
      const keyPrefix = randomPrefix();
      const store = new RedisDedupStore(client, { keyPrefix });
      await expect(store.begin('evt_1', 60_000)).rejects.toThrow(/^NOPERM .*'evalsha'/);
      // Nothing ran: an EVAL would have claimed the id.
      expect(await admin.exists(`${keyPrefix}evt_1`)).toBe(0);
    } finally {
      client.disconnect();
    }
  });

  it('rejects with what the connection threw even when it is no Error', async () => {
    const thrown = { reason: 'not an Error' };
    const store = new RedisDedupStore(() => Promise.reject(thrown));
    await expect(store.begin('evt_1', 1000)).rejects.toBe(thrown);
  });

  it('rejects with dedup_unavailable after commandTimeoutMs when Redis does not answer', async () => {
    const silent = await silentServer();
    // Ready as soon as TCP connects: the silent server never answers a ready check.
    const client = new Redis(silent.port, '127.0.0.1', { enableReadyCheck: false, maxRetriesPerRequest: null, retryStrategy: () => null });
    client.on('error', () => {});
    try {
      const store = new RedisDedupStore(client, { commandTimeoutMs: 150 });
      const late = { code: 'dedup_unavailable', message: 'Redis did not answer within 150 ms' };
      await expect(store.begin('evt_1', 1000)).rejects.toBeInstanceOf(WebhookDedupError);
      await expect(store.begin('evt_2', 1000)).rejects.toMatchObject(late);
      await expect(store.release('evt_1', 'token')).rejects.toMatchObject(late);
    } finally {
      client.disconnect();
      await silent.close();
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

  it("keeps an ordered event's record, its object's lease and version under its object's hash tag, with expiry", async () => {
    const keyPrefix = randomPrefix();
    const store = new RedisDedupStore(ioredis, { keyPrefix });
    const { token } = await claimInOrder(store, 'evt_1', at(7), 30_000);
    const [eventKey, versionKey, leaseKey] = await orderedKeys(keyPrefix, 'evt_1');
    expect(eventKey).toMatch(new RegExp(`^${keyPrefix}\\{[\\w-]{12}\\}eevt_1$`));
    expect(versionKey).toBe(`${eventKey.slice(0, keyPrefix.length + 14)}v${at(7).key}`);
    expect(leaseKey).toBe(`${eventKey.slice(0, keyPrefix.length + 14)}l${at(7).key}`);
    expect(await ioredis.keys(`${keyPrefix}*`)).toHaveLength(2);
    for (const key of [eventKey, leaseKey]) {
      expect(await ioredis.get(key)).toBe(token);
      expect(await ioredis.pttl(key)).toBeGreaterThan(20_000);
    }
    expect(await store.completeInOrder('evt_1', at(7), token, 4 * 24 * 3600_000)).toBe(true);
    expect(await ioredis.keys(`${keyPrefix}*`)).toHaveLength(2);
    expect(await ioredis.get(eventKey)).toBe('done');
    expect(await ioredis.get(versionKey)).toBe('7');
    for (const key of [eventKey, versionKey]) expect(await ioredis.pttl(key)).toBeGreaterThan(3 * 24 * 3600_000);
  });

  it('starts the records of ordered events apart from those of plain ones, as documented', async () => {
    const store = new RedisDedupStore(ioredis, { keyPrefix: randomPrefix() });
    const plain = await claim(store, 'evt_1');
    expect(await store.complete('evt_1', plain, 60_000)).toBe(true);
    const ordered = await claimInOrder(store, 'evt_1', at(1));
    expect(await store.completeInOrder('evt_1', at(1), ordered.token, 60_000)).toBe(true);
    expect(await store.begin('evt_1', 60_000)).toEqual({ state: 'done' });
    expect(await store.beginInOrder('evt_1', at(1), 60_000)).toEqual({ state: 'done' });
  });

  it('compares the versions JavaScript writes with an exponent as numbers', async () => {
    const store = new RedisDedupStore(ioredis, { keyPrefix: randomPrefix() });
    for (const [object, lower, higher] of [['msg_1', 9e20, 1e21], ['msg_2', 1e-7, 2e-7], ['msg_3', -1e21, -5], ['msg_4', 5e-324, 1]] as const) {
      const done = await claimInOrder(store, `evt_${object}`, at(higher, object));
      expect(await store.completeInOrder(`evt_${object}`, at(higher, object), done.token, 60_000)).toBe(true);
      expect((await claimInOrder(store, `evt_${object}_older`, at(lower, object))).stale, object).toBe(true);
    }
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
  it('gives exactly one claim to concurrent begins from many connections, of one id or of events of one object', async () => {
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
        const ordered = await Promise.all(stores.map((store, i) => store.beginInOrder(`${id}_${i}`, at(i, `msg_${round}`), 60_000)));
        expect(ordered.filter((r) => r.state === 'claimed')).toHaveLength(1);
        expect(ordered.filter((r) => r.state === 'in_progress')).toHaveLength(15);
      }
    } finally {
      await Promise.all(clients.map((client) => ('call' in client ? client.quit() : client.close())));
    }
  }, 20_000);
});
