/**
 * The suites mutation testing runs: the core, receiver, handler and adapter
 * tests, the command line's in-process tests and the memory store's. Left out: the load and outage runs (minutes each, and
 * they test the stores rather than the mutated code) and everything that
 * needs Redis, whose store is not mutated.
 */
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: [
      'test/core/**/*.test.ts',
      'test/adapters/**/*.test.ts',
      'test/handlers/**/*.test.ts',
      'test/dedup/memory-dedup-store*.test.ts',
      // The command line's in-process suites; packed-cli runs the built tarball, not the mutated source.
      'test/cli/{diagnose,captured-request,run}.test.ts',
    ],
  },
});
