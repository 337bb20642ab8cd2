/** runOnError's report of a failing onError: one line, whatever the failure is. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { runOnError } from '../../src/receive/on-error.js';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('runOnError', () => {
  it('reports a rejection whose value cannot be printed, and answers undefined for the default answer', async () => {
    const log = vi.spyOn(console, 'error').mockImplementation(() => {});
    const unprintable = {
      toString() {
        throw new Error('no string for you');
      },
    };
    await expect(runOnError(() => Promise.reject(unprintable), 1_000)).resolves.toBe(undefined);
    expect(log).toHaveBeenCalledWith(expect.stringContaining('failed (an unprintable value)'));
  });
});
