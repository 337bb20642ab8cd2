/**
 * Mutation testing of the core alone (`npm run test:mutation:core`):
 * src/core/, held to 90%. The rest of the settings are stryker.config.mjs's.
 * @type {import('@stryker-mutator/api/core').PartialStrykerOptions}
 */
import base from './stryker.config.mjs';

export default {
  ...base,
  mutate: ['src/core/**/*.ts'],
  thresholds: { ...base.thresholds, break: 90 },
  htmlReporter: { fileName: 'reports/mutation-core/index.html' },
  jsonReporter: { fileName: 'reports/mutation-core/mutation.json' },
};
