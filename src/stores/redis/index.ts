/**
 * svc-webhooks/redis: a `DedupStore` in Redis, shared by every process that
 * receives the webhooks, which also orders events (the `ordering` option).
 * It speaks to Redis through a `sendCommand`-style function, so it works with
 * ioredis and node-redis (v4 and later), single servers and clusters, and has
 * no dependency of its own.
 * @packageDocumentation
 */
export {
  RedisDedupStore,
  type IoredisClient,
  type NodeRedisClient,
  type NodeRedisCluster,
  type RedisConnection,
  type RedisDedupStoreOptions,
  type RedisSendCommand,
} from './redis-dedup-store.js';
