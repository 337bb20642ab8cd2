/**
 * How the run finds its Redis: the one REDIS_URL names, else the default
 * address, else a redis-server of its own; and one line when it can have
 * none. `npm test` on a fresh clone depends on it.
 */
import { describe, expect, it } from 'vitest';
import { pings } from '../helpers/private-redis.js';
import { freePort } from '../helpers/free-port.js';
import { redisUrl } from '../helpers/redis-clients.js';
import { NoRedisError, redisForTests } from './redis-for-tests.js';

const { PATH } = process.env;

/** A redis:// URL of a port nothing listens on. */
async function deadUrl(): Promise<string> {
  return `redis://127.0.0.1:${await freePort()}`;
}

describe('the Redis of a test run', () => {
  it('starts a redis-server of its own when REDIS_URL is unset and nothing answers at the default address, and stops it after', async () => {
    const redis = await redisForTests({ PATH }, await deadUrl());
    try {
      expect(redis.stop).toBeTypeOf('function');
      expect(await pings(Number(new URL(redis.url).port))).toBe(true);
    } finally {
      await redis.stop?.();
    }
    expect(await pings(Number(new URL(redis.url).port))).toBe(false);
  }, 20_000);

  it('uses the default address when it answers', async () => {
    const running = redisUrl();
    expect(await redisForTests({ PATH }, running)).toEqual({ url: running });
  });

  it('uses REDIS_URL when it answers, and never starts one of its own then', async () => {
    const running = redisUrl();
    expect(await redisForTests({ PATH, REDIS_URL: running }, await deadUrl())).toEqual({ url: running });
  });

  it('fails with one line when REDIS_URL is set and does not answer', async () => {
    const url = await deadUrl();
    const failure = redisForTests({ PATH, REDIS_URL: url });
    await expect(failure).rejects.toThrow(NoRedisError);
    await expect(failure).rejects.toThrow(new RegExp(`^svc-webhooks: REDIS_URL=${url} does not answer[^\\n]*$`));
  });

  it('fails with one line naming what to install when redis-server is not on PATH', async () => {
    const failure = redisForTests({ PATH: '/nonexistent' });
    await expect(failure).rejects.toThrow(NoRedisError);
    await expect(failure).rejects.toThrow(/^svc-webhooks: the tests need redis-server and redis-cli on PATH: install Redis \([^\n]*\)$/);
  });
});
