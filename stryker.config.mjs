/**
 * Mutation testing: the settings every run shares. `npm run test:mutation`
 * (test/mutation/areas.ts) runs it area by area, naming each area's files
 * and suites on the command line; alone, it mutates all of src/ and
 * adapters/ against every suite of vitest.mutation.config.ts, which need
 * the Redis and Postgres the tests use. Reports go to reports/mutation/
 * (git-ignored), and the results a later run reuses for unchanged code to
 * reports/stryker-incremental.json.
 *
 * Four runners on two cores: most suites wait on servers and timers. Static
 * mutants (a module's top-level values, computed once at import) are left
 * out: each reruns every suite, 22% of the mutants for 76% of the time, and
 * the values they change (the error table, defaults, channel names) are
 * held by tests of their own.
 * @type {import('@stryker-mutator/api/core').PartialStrykerOptions}
 */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.mutation.config.ts' },
  mutate: ['src/**/*.ts', 'adapters/**/*.ts'],
  coverageAnalysis: 'perTest',
  concurrency: 4,
  ignoreStatic: true,
  incremental: true,
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: 'reports/mutation/index.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  thresholds: { high: 95, low: 85, break: 95 },
  tempDirName: '.stryker-tmp',
  // What the tests and the long runs leave under .cache/ (majors of the frameworks installed, contracts written):
  // no suite of a mutation run needs it, and copying it into every sandbox costs hundreds of megabytes.
  ignorePatterns: ['/.cache'],
};
