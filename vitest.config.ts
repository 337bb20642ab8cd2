import { configDefaults, defineConfig } from 'vitest/config';
import { LONG_RUNS } from './test/setup/long-runs.js';
import { LongRunsFirst } from './test/setup/long-runs-first.js';

// A mutation run's sandbox holds a copy of every suite: never run those as well.
const exclude = [...configDefaults.exclude, '.stryker-tmp*/**'];

export default defineConfig({
  test: {
    // Finds or starts the Redis the suites share, once per run.
    globalSetup: ['test/setup/redis-for-tests.ts'],
    // Most suites wait on servers, timers and child processes rather than
    // compute: four at once on two cores, not vitest's one.
    maxWorkers: 4,
    sequence: { sequencer: LongRunsFirst },
    projects: [
      { extends: true, test: { name: 'unit', exclude: [...exclude, ...LONG_RUNS], typecheck: { enabled: true } } },
      { extends: true, test: { name: 'long', include: LONG_RUNS, exclude } },
    ],
  },
});
