/**
 * Mutation testing (`npm run test:mutation`): src/ and adapters/ against the
 * suites of vitest.mutation.config.ts. The Redis and Postgres stores are left
 * out: their tests need a server and are not in that config. Reports go to
 * reports/mutation/ (git-ignored).
 * @type {import('@stryker-mutator/api/core').PartialStrykerOptions}
 */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.mutation.config.ts' },
  // The store failure hints are tested on the errors real Redis and Postgres servers raise, so their suites are not here.
  mutate: ['src/**/*.ts', 'adapters/**/*.ts', '!src/stores/redis/**', '!src/stores/postgres/**', '!src/stores/store-failure-hint.ts', '!src/stores/error-chain.ts'],
  coverageAnalysis: 'perTest',
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: 'reports/mutation/index.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  thresholds: { high: 90, low: 85, break: 85 },
  tempDirName: '.stryker-tmp',
};
