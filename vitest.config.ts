import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // Finds or starts the Redis the suites share, once per run.
    globalSetup: ['test/setup/redis-for-tests.ts'],
    // A mutation run's sandbox holds a copy of every suite: never run those as well.
    exclude: [...configDefaults.exclude, '.stryker-tmp*/**'],
  },
});
