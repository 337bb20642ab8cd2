/**
 * The three receivers of the Redis runs, each with a connection of its own
 * to one server and sharing one key prefix: Express over ioredis, Hono over
 * node-redis, Fastify over ioredis.
 */
import type { RedisOptions } from 'ioredis';
import type { RedisClientOptions } from 'redis';
import type { DedupStore } from '../../../src/stores/dedup-store.js';
import { RedisDedupStore, type RedisDedupStoreOptions } from '../../../src/stores/redis/index.js';
import { connectIoredis, connectNodeRedis } from '../redis-clients.js';
import { startReceiverInstance, type Framework, type ReceiverInstanceOptions } from './receiver-instance.js';

export interface ReceiversOnRedisOptions {
  readonly ioredis?: RedisOptions;
  readonly nodeRedis?: RedisClientOptions;
  readonly store: RedisDedupStoreOptions;
  /** What every instance shares. */
  readonly instance: Omit<ReceiverInstanceOptions, 'framework' | 'dedup'>;
  /** Wraps each instance's store, e.g. to watch it. */
  readonly wrapStore?: (store: DedupStore) => DedupStore;
}

/** Starts the three receivers; answers their URLs. `closeAtEnd` gets what to close. */
export async function startReceiversOnRedis(
  url: string,
  options: ReceiversOnRedisOptions,
  closeAtEnd: (close: () => unknown) => void,
): Promise<string[]> {
  const { wrapStore = (store) => store } = options;
  const connections = {
    express: await connectIoredis(url, options.ioredis),
    hono: await connectNodeRedis(url, options.nodeRedis),
    fastify: await connectIoredis(url, options.ioredis),
  };
  closeAtEnd(() => connections.express.disconnect());
  closeAtEnd(() => connections.hono.destroy());
  closeAtEnd(() => connections.fastify.disconnect());
  const urls: string[] = [];
  for (const framework of Object.keys(connections) as Framework[]) {
    const dedup = wrapStore(new RedisDedupStore(connections[framework], options.store));
    const instance = await startReceiverInstance({ ...options.instance, framework, dedup });
    closeAtEnd(() => instance.close());
    urls.push(instance.url);
  }
  return urls;
}
