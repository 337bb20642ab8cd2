import { configDefaults, defineConfig } from 'vitest/config';
import { LONG_RUNS } from './test/setup/long-runs.js';

// A mutation run's sandbox holds a copy of every suite: never run those as well.
const exclude = [...configDefaults.exclude, '.stryker-tmp*/**'];

export default defineConfig({
  test: {
    // Finds or starts the Redis the suites share, once per run.
    globalSetup: ['test/setup/redis-for-tests.ts'],
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          exclude: [...exclude, ...LONG_RUNS],
          // Vitest's type check runs tsc on the whole of tsconfig.json, not just the type tests: an error in any
          // source file, bench, example or script fails the run as an unhandled source error.
          typecheck: { enabled: true, exclude },
          // Most suites wait on servers, timers and child processes rather than compute: four at once on
          // two cores, not vitest's one.
          maxWorkers: 4,
        },
      },
      {
        extends: true,
        test: {
          name: 'long',
          include: LONG_RUNS,
          exclude,
          // Each long run loads the machine on its own (worker processes, servers killed and restarted,
          // a sender with deadlines): one at a time, after the other suites, so that none of them starves.
          maxWorkers: 1,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
