/**
 * The Redis the test run uses, found or started once per run (vitest
 * `globalSetup`) and handed to the suites as `inject('redisUrl')`.
 *
 * `REDIS_URL` names it, by default redis://127.0.0.1:6379. When REDIS_URL is
 * unset and nothing answers at the default address, the run starts its own
 * redis-server on a free port and stops it at the end. A REDIS_URL that was
 * set and does not answer fails the run: a server named on purpose is never
 * silently replaced. The fault and cluster suites start servers of their
 * own, so redis-server and redis-cli must be installed in any case; if they
 * are not, the run stops at once with one line saying what to install.
 */
import { spawn } from 'node:child_process';
import type { TestProject } from 'vitest/node';
import { PrivateRedis } from '../helpers/private-redis.js';
import { answers } from '../helpers/tcp-answers.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The Redis server the suites share; each suite keeps to key prefixes of its own. */
    redisUrl: string;
  }
}

export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

const INSTALL_HINT =
  'the tests need redis-server and redis-cli on PATH: install Redis (Debian/Ubuntu: apt-get install redis-server; macOS: brew install redis)';

export interface RedisForTests {
  readonly url: string;
  /** Stops the server the run started itself; absent for a server it found. */
  readonly stop?: () => Promise<void>;
}

/** Finds or starts the run's Redis; rejects with a `NoRedisError` when it can do neither. */
export async function redisForTests(env: NodeJS.ProcessEnv = process.env, defaultUrl = DEFAULT_REDIS_URL): Promise<RedisForTests> {
  for (const command of ['redis-server', 'redis-cli']) {
    if (!(await runs(command, env))) throw oneLine(INSTALL_HINT);
  }
  const named = env.REDIS_URL !== undefined && env.REDIS_URL !== '';
  const url = named ? env.REDIS_URL! : defaultUrl;
  const { hostname, port } = new URL(url);
  if (await answers(hostname, Number(port || 6379))) return { url };
  if (named) throw oneLine(`REDIS_URL=${url} does not answer: start that server, or unset REDIS_URL to let the tests start their own`);
  const redis = await PrivateRedis.start();
  return { url: redis.url, stop: () => redis.close() };
}

/**
 * The vitest globalSetup: provides `redisUrl`, and answers the teardown.
 * Without a Redis it prints its one line and ends the run at once.
 */
export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  let redis: RedisForTests;
  try {
    redis = await redisForTests();
  } catch (error) {
    if (!(error instanceof NoRedisError)) throw error;
    console.error(error.message);
    process.exit(1);
  }
  project.provide('redisUrl', redis.url);
  return redis.stop;
}

/** Why the run has no Redis, in one line. */
export class NoRedisError extends Error {}

function oneLine(message: string): NoRedisError {
  return new NoRedisError(`svc-webhooks: ${message}`);
}

/** Whether `command --version` runs, looked up on `env.PATH`. */
function runs(command: string, env: NodeJS.ProcessEnv): Promise<boolean> {
  return new Promise((resolve) => {
    const child = spawn(command, ['--version'], { env, stdio: 'ignore' });
    child.on('error', () => resolve(false));
    child.on('exit', (code) => resolve(code === 0));
  });
}
