/**
 * `ordering` over HTTP on each store that orders, behind the Express entry:
 * the same contract the entries run on their default memory store, on
 * Redis, Postgres (pg) and SQLite (better-sqlite3).
 */
import { afterAll, beforeAll, describe } from 'vitest';
import type { Redis } from 'ioredis';
import { RedisDedupStore } from '../../src/stores/redis/redis-dedup-store.js';
import { PostgresDedupStore } from '../../src/stores/postgres/postgres-dedup-store.js';
import { SqliteDedupStore } from '../../src/stores/sqlite/sqlite-dedup-store.js';
import { serveExpress } from '../helpers/adapter-servers.js';
import { fetchHarness } from '../helpers/http-harness.js';
import { orderingContract } from '../helpers/ordering-contract.js';
import type { BuildHarness } from '../helpers/adapter-contract.js';
import { postgresSuite } from '../helpers/postgres-suite.js';
import { connectIoredis, randomPrefix, redisUrl } from '../helpers/redis-clients.js';
import { sqliteSuite } from '../helpers/sqlite-suite.js';
import { now } from '../helpers/signed-request.js';

const express: BuildHarness = async ({ options, route }) => {
  const app = await serveExpress(options, route);
  return fetchHarness(app.url, () => app.close());
};

describe('ordering on Express with a RedisDedupStore', () => {
  let redis: Redis;
  beforeAll(async () => {
    redis = await connectIoredis(redisUrl());
  });
  afterAll(() => redis.quit());
  orderingContract(express, () => new RedisDedupStore(redis, { keyPrefix: randomPrefix() }));
});

describe('ordering on Express with a PostgresDedupStore', () => {
  const suite = postgresSuite();
  orderingContract(express, async () => {
    const store = new PostgresDedupStore(suite.pool, { table: suite.table('dedup') });
    await store.migrate();
    return store;
  });
});

describe('ordering on Express with a SqliteDedupStore', () => {
  const suite = sqliteSuite();
  orderingContract(express, () => {
    const store = new SqliteDedupStore(suite.open(), { now });
    store.migrate();
    return store;
  });
});
