/**
 * The suites that hold the core (`npm run test:mutation:core`): the specs of
 * test/core/, which call its functions directly, and the check of the
 * README's error table against `ERROR_CODES`. The core is pure, so what
 * these do not pin down is a gap in them, whatever an entry's suite over
 * HTTP happens to notice.
 */
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/core/**/*.test.ts', 'test/scripts/error-table.test.ts'],
  },
});
