/** onError's checks and its deadline on a fake clock: what answers, what is logged, and when. */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { checkOnErrorOptions, runOnError } from '../../src/receive/on-error.js';
import { WebhookOptionsError } from '../../src/base/options-error.js';

describe('onError', () => {
  const LATE_LINE = 'svc-webhooks: onError did not answer within 100 ms; a request it left unanswered gets the default answer';

  let log: ReturnType<typeof vi.spyOn>;

  beforeEach(() => {
    vi.useFakeTimers();
    log = vi.spyOn(console, 'error').mockImplementation(() => {});
  });

  afterEach(() => {
    vi.useRealTimers();
    vi.restoreAllMocks();
  });

  describe('checkOnErrorOptions', () => {
    it('answers onErrorTimeoutMs, or 5000 by default', () => {
      expect(checkOnErrorOptions({})).toBe(5_000);
      expect(checkOnErrorOptions({ onError: () => undefined, onErrorTimeoutMs: 250 })).toBe(250);
    });

    it.each([
      ['an onError that is no function', { onError: 'log' }, 'onError must be a function'],
      ['a zero onErrorTimeoutMs', { onErrorTimeoutMs: 0 }, 'onErrorTimeoutMs must be a whole number of milliseconds from 1 to 2147483647'],
    ])('refuses %s with the whole message', (_name, options, says) => {
      expect(() => checkOnErrorOptions(options)).toThrow(new WebhookOptionsError(`svc-webhooks: ${says}`));
    });
  });

  describe('runOnError', () => {
    it('answers the value once onError has answered within the deadline, logging nothing', async () => {
      let done!: () => void;
      const running = runOnError(() => new Promise<string>((resolve) => (done = () => resolve('custom'))), 100);
      let outcome: unknown = 'pending';
      void running.then((value) => (outcome = value));
      await vi.advanceTimersByTimeAsync(50);
      expect(outcome).toBe('pending');
      done();
      await vi.advanceTimersByTimeAsync(0);
      expect(outcome).toEqual({ value: 'custom' });
      expect(log).not.toHaveBeenCalled();
    });

    it('gives up at the deadline with one line, not before', async () => {
      let outcome: unknown = 'pending';
      void runOnError(() => new Promise(() => undefined), 100).then((value) => (outcome = value));
      await vi.advanceTimersByTimeAsync(99);
      expect(outcome).toBe('pending');
      await vi.advanceTimersByTimeAsync(1);
      expect(outcome).toBe(undefined);
      expect(log.mock.calls).toEqual([[LATE_LINE]]);
    });

    it('reports a failure that comes after the deadline too, without rejecting', async () => {
      let fail!: (error: Error) => void;
      const running = runOnError(() => new Promise((_resolve, reject) => (fail = reject)), 100);
      await vi.advanceTimersByTimeAsync(100);
      expect(await running).toBe(undefined);
      fail(new Error('too late'));
      await vi.advanceTimersByTimeAsync(0);
      expect(log.mock.calls).toEqual([
        [LATE_LINE],
        ['svc-webhooks: onError failed (too late); a request it left unanswered gets the default answer'],
      ]);
    });
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
});
