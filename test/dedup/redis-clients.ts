/**
 * Connections for the Redis suites, to the server the run found or started
 * (`test/setup/redis-for-tests.ts`).
 */
import { randomBytes } from 'node:crypto';
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { createClient, createCluster, type RedisClientOptions } from 'redis';
import { inject } from 'vitest';

export type NodeRedis = ReturnType<typeof createClient>;
export type NodeRedisCluster = ReturnType<typeof createCluster>;

/** The Redis server the suites share: REDIS_URL, redis://127.0.0.1:6379, or one the run started. */
export function redisUrl(): string {
  return inject('redisUrl');
}

/** A key prefix no other test uses. */
export function randomPrefix(): string {
  return `svc-webhooks-test:${randomBytes(8).toString('hex')}:`;
}

/** An ioredis client that answered PING. By default it gives up after a few failed connection attempts. */
export async function connectIoredis(url: string, options: RedisOptions = {}): Promise<Redis> {
  const client = new Redis(url, {
    maxRetriesPerRequest: 1,
    retryStrategy: (attempt) => (attempt > 5 ? null : 100),
    ...options,
  });
  // Failures surface as rejected commands; without a listener ioredis prints each one.
  client.on('error', () => {});
  try {
    await client.ping();
  } catch (error) {
    client.disconnect();
    throw error;
  }
  return client;
}

/** A connected node-redis client. By default it gives up after a few failed connection attempts. */
export async function connectNodeRedis(url: string, options: RedisClientOptions = {}): Promise<NodeRedis> {
  const client = createClient({
    url,
    ...options,
    socket: {
      connectTimeout: 2_000,
      reconnectStrategy: (retries: number) => (retries > 5 ? new Error('Redis is unreachable') : 100),
      ...options.socket,
    },
  });
  // node-redis throws on an 'error' event nobody listens to; failures surface as rejected commands.
  client.on('error', () => {});
  await client.connect();
  return client as NodeRedis;
}

/** An ioredis `Cluster` over the nodes on 127.0.0.1 at `ports`, once it is ready. */
export async function connectIoredisCluster(ports: readonly number[]): Promise<Cluster> {
  const cluster = new Cluster(
    ports.map((port) => ({ host: '127.0.0.1', port })),
    { redisOptions: { maxRetriesPerRequest: 1 }, clusterRetryStrategy: (attempt) => (attempt > 5 ? null : 100) },
  );
  cluster.on('error', () => {});
  try {
    await cluster.ping();
  } catch (error) {
    cluster.disconnect();
    throw error;
  }
  return cluster;
}

/** A connected node-redis cluster over the nodes on 127.0.0.1 at `ports`. */
export async function connectNodeRedisCluster(ports: readonly number[]): Promise<NodeRedisCluster> {
  const cluster = createCluster({
    rootNodes: ports.map((port) => ({ url: `redis://127.0.0.1:${port}` })),
    defaults: { socket: { connectTimeout: 2_000, reconnectStrategy: (retries: number) => (retries > 5 ? new Error('Redis is unreachable') : 100) } },
  });
  cluster.on('error', () => {});
  await cluster.connect();
  return cluster as NodeRedisCluster;
}
