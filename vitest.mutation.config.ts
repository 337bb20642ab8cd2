/**
 * The suites mutation testing runs: every suite of the mutated code, the
 * queue entries' and the stores' included, over the Redis and Postgres the
 * test run finds or starts. Left out: the load, crash and outage runs and the
 * suites on another Node or a Redis Cluster (minutes each; they test the
 * servers' faults rather than the mutated code, which the other suites
 * cover), and the packed-tarball suite, which runs the built bin rather than
 * the mutated source.
 */
import { configDefaults, defineConfig } from 'vitest/config';
import { LONG_RUNS } from './test/setup/long-runs.js';

export default defineConfig({
  test: {
    globalSetup: ['test/setup/redis-for-tests.ts'],
    include: [
      'test/base/**/*.test.ts',
      'test/core/**/*.test.ts',
      'test/stores/**/*.test.ts',
      'test/process/**/*.test.ts',
      'test/receive/**/*.test.ts',
      'test/queues/**/*.test.ts',
      'test/adapters/**/*.test.ts',
      'test/otel/**/*.test.ts',
      'test/testing/**/*.test.ts',
      'test/cli/**/*.test.ts',
    ],
    exclude: [
      ...configDefaults.exclude,
      ...LONG_RUNS,
      'test/**/*outage*.test.ts',
      'test/**/*after-death*.test.ts',
      'test/**/redis-cluster.test.ts',
      // Its workers are processes of their own, which no mutant reaches.
      'test/otel/queue-traces-across-processes.test.ts',
    ],
  },
});
