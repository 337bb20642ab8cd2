/**
 * The long runs: half a minute to three minutes each, they hold the receivers
 * and the queues to exactly once under load, outages and crashes, many
 * tenants' lookups to their bounds under hundreds of deliveries, run the
 * pg-boss majors again on another Node and the NestJS spec on its other
 * majors, run the packed bin, and drive the dev page in Chromium (which
 * `.ci/run` installs from Debian's packages). Each loads
 * the machine on its own, so `npm run test:long` runs them one at a time,
 * and `npm test`, the contributor's loop, leaves them out.
 */
export const LONG_RUNS = [
  'test/load/**/*.test.ts',
  'test/queues/pg-boss/majors-on-node-22.test.ts',
  'test/queues/bullmq/exactly-once.load.test.ts',
  'test/queues/pg-boss/exactly-once-load.test.ts',
  'test/queues/cloudflare/exactly-once.load.test.ts',
  'test/queues/bullmq/redis-crash.test.ts',
  'test/cli/packed-cli.test.ts',
  'test/queues/pg-boss/exactly-once-crash.test.ts',
  'test/adapters/nestjs-majors.test.ts',
  'test/cli/dev/page.browser.test.ts',
];
