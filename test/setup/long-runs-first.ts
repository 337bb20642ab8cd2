/**
 * The order the suites start in: the long runs first, in the order of
 * LONG_RUNS, then the others in vitest's own order (failed, then longest, by
 * its cache).
 */
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { LONG_RUNS } from './long-runs.js';

export class LongRunsFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (spec: TestSpecification): number => {
      const index = LONG_RUNS.indexOf(relative(spec.project.config.root, spec.moduleId));
      return index === -1 ? LONG_RUNS.length : index;
    };
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}
