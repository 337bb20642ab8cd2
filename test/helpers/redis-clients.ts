/**
 * Connections for the Redis suites, to the server the run found or started
 * (`test/setup/redis-for-tests.ts`).
 */
import { randomBytes } from 'node:crypto';
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { createClient, createCluster, type RedisClientOptions } from 'redis';
import { inject } from 'vitest';
import { RedisDedupStore, type RedisConnection } from '../../src/stores/redis/index.js';
import type { DedupHarness } from './dedup-store-contract.js';

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

// By default a client gives up after a few failed connection attempts, 100 ms apart.
const ioredisRetry = (attempt: number): number | null => (attempt > 5 ? null : 100);
const nodeRedisSocket = {
  connectTimeout: 2_000,
  reconnectStrategy: (retries: number) => (retries > 5 ? new Error('Redis is unreachable') : 100),
};

/** An ioredis client that answered PING. */
export function connectIoredis(url: string, options: RedisOptions = {}): Promise<Redis> {
  return answering(new Redis(url, { maxRetriesPerRequest: 1, retryStrategy: ioredisRetry, ...options }));
}

/** An ioredis `Cluster` over the nodes on 127.0.0.1 at `ports`, once it answered PING. */
export function connectIoredisCluster(ports: readonly number[]): Promise<Cluster> {
  const nodes = ports.map((port) => ({ host: '127.0.0.1', port }));
  return answering(new Cluster(nodes, { redisOptions: { maxRetriesPerRequest: 1 }, clusterRetryStrategy: ioredisRetry }));
}

/** A connected node-redis client. */
export async function connectNodeRedis(url: string, options: RedisClientOptions = {}): Promise<NodeRedis> {
  const client = createClient({ url, ...options, socket: { ...nodeRedisSocket, ...options.socket } });
  // node-redis throws on an 'error' event nobody listens to; failures surface as rejected commands.
  client.on('error', () => {});
  await client.connect();
  return client as NodeRedis;
}

/** A connected node-redis cluster over the nodes on 127.0.0.1 at `ports`. */
export async function connectNodeRedisCluster(ports: readonly number[]): Promise<NodeRedisCluster> {
  const cluster = createCluster({ rootNodes: ports.map((port) => ({ url: `redis://127.0.0.1:${port}` })), defaults: { socket: nodeRedisSocket } });
  cluster.on('error', () => {});
  await cluster.connect();
  // Through unknown: the options above give the cluster narrower generics than the store's type names, and TypeScript compares the two differently depending on which files it checked first.
  return cluster as unknown as NodeRedisCluster;
}

/** The ioredis client once it answered PING, or disconnected and the error. */
async function answering<Client extends Redis | Cluster>(client: Client): Promise<Client> {
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

/** A store on the server or cluster of `connection`, with keys of its own; time passes for real. */
export function redisStoreHarness(connection: () => RedisConnection): () => Promise<DedupHarness> {
  return async () => ({
    store: new RedisDedupStore(connection(), { keyPrefix: randomPrefix() }),
    advance: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  });
}
