/**
 * The suites mutation testing runs: the core, receiver, handler and adapter
 * tests, the command line's in-process tests and the memory store's. Left out:
 * the load and outage runs (minutes each, and they test the stores rather than
 * the mutated code), everything that needs Redis or Postgres, whose stores are
 * not mutated (the many-tenant suite over HTTP, whose secrets are in a
 * Postgres table: test/core and test/receive cover the same code without
 * one), and the packed-tarball suite, which runs the built bin rather than
 * the mutated source.
 */
import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: [
      'test/core/**/*.test.ts',
      'test/receive/**/*.test.ts',
      'test/adapters/**/*.test.ts',
      'test/otel/**/*.test.ts',
      'test/testing/**/*.test.ts',
      'test/dedup/memory-dedup-store*.test.ts',
      'test/cli/**/*.test.ts',
    ],
    exclude: [...configDefaults.exclude, 'test/cli/packed-cli.test.ts', 'test/adapters/tenants.test.ts'],
  },
});
