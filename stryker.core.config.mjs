/**
 * Mutation testing of the core alone (`npm run test:mutation:core`):
 * src/core/ against its own specs (vitest.mutation-core.config.ts), held to
 * 90%. The rest of the settings are stryker.config.mjs's.
 * @type {import('@stryker-mutator/api/core').PartialStrykerOptions}
 */
import base from './stryker.config.mjs';

export default {
  ...base,
  vitest: { configFile: 'vitest.mutation-core.config.ts' },
  // The core's suites take seconds, so its static mutants (the error table, the patterns) are run
  // against all of them too: one that a suite also reaches through a fresh import would otherwise be
  // run against that suite alone.
  ignoreStatic: false,
  // A static mutant reloads every suite, which takes longer than a mutant's usual bound: one cut off
  // would count as found without a test having failed.
  timeoutMS: 20_000,
  mutate: ['src/core/**/*.ts'],
  thresholds: { ...base.thresholds, break: 90 },
  htmlReporter: { fileName: 'reports/mutation-core/index.html' },
  jsonReporter: { fileName: 'reports/mutation-core/mutation.json' },
  incrementalFile: 'reports/stryker-incremental-core.json',
};
