/** Reporting a store failure no response can carry: the user's onStoreError awaited, its own failure logged in one line. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { logStoreError, storeErrorReporter } from '../../src/receive/store-error-report.js';
import { failingBothWays } from '../helpers/failing-callbacks.js';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('storeErrorReporter', () => {
  it('hands the error to onStoreError, and resolves only once its promise has', async () => {
    const heard: unknown[] = [];
    let finish!: () => void;
    const report = storeErrorReporter((error) => {
      heard.push(error);
      return new Promise<void>((resolve) => (finish = resolve));
    });
    let reported = false;
    const reporting = report(new Error('renew failed')).then(() => (reported = true));
    expect(heard).toEqual([new Error('renew failed')]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(reported).toBe(false);
    finish();
    await reporting;
    expect(reported).toBe(true);
  });

  it('logs nothing when onStoreError succeeds', async () => {
    const log = vi.spyOn(console, 'error').mockImplementation(() => {});
    await storeErrorReporter(() => undefined)(new Error('complete failed'));
    expect(log).not.toHaveBeenCalled();
  });

  it.each(failingBothWays(new Error('pager down')))('logs one line and resolves when onStoreError %s', async (_how, onStoreError) => {
    const log = vi.spyOn(console, 'error').mockImplementation(() => {});
    await expect(storeErrorReporter(onStoreError)(new Error('complete failed'))).resolves.toBe(undefined);
    expect(log.mock.calls).toEqual([['svc-webhooks: onStoreError threw (pager down); the claim is left to its lease']]);
  });
});

describe('logStoreError', () => {
  it('logs one line naming the store error and what it may lead to', () => {
    const log = vi.spyOn(console, 'error').mockImplementation(() => {});
    logStoreError(new Error('connection refused'));
    expect(log.mock.calls).toEqual([
      ["svc-webhooks: the dedup store failed until the claim's lease ran out (connection refused); a retry of that event may run the route again"],
    ]);
  });
});
