import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // Finds or starts the Redis the suites share, once per run.
    globalSetup: ['test/setup/redis-for-tests.ts'],
  },
});
