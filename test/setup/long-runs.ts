/**
 * The long runs: a minute or more each, they hold the queues to exactly once
 * under load and crashes, run the pg-boss majors again on another Node, and
 * run the packed bin. Mostly waiting on servers, timers and child processes,
 * they run beside the other suites and start first, longest first, so that
 * `npm test` ends soon after the longest of them; `npm run test:long` runs
 * them alone.
 */
export const LONG_RUNS = [
  'test/queues/pg-boss/majors-on-node-22.test.ts',
  'test/queues/bullmq/exactly-once.load.test.ts',
  'test/queues/pg-boss/exactly-once-load.test.ts',
  'test/queues/bullmq/redis-crash.test.ts',
  'test/cli/packed-cli.test.ts',
  'test/queues/pg-boss/exactly-once-crash.test.ts',
];
