/**
 * Calling the user's callbacks: onError's checks and its deadline on a fake
 * clock (what answers, what is logged, and when), callbacks whose outcome
 * nobody waits for, and a printable reason for anything thrown.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { callSafely, checkOnErrorOptions, reasonOf, runOnError } from '../../src/receive/user-callbacks.js';
import { failingBothWays } from '../helpers/failing-callbacks.js';

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
      expect(() => checkOnErrorOptions(options)).toThrow(new TypeError(`svc-webhooks: ${says}`));
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

/** Runs `act`, then one turn of the event loop; answers the unhandled rejections Node saw meanwhile. */
async function unhandledRejectionsOf(act: () => void): Promise<unknown[]> {
  const unhandled: unknown[] = [];
  const listener = (reason: unknown): void => void unhandled.push(reason);
  process.on('unhandledRejection', listener);
  try {
    act();
    await new Promise((resolve) => setImmediate(resolve));
  } finally {
    process.off('unhandledRejection', listener);
  }
  return unhandled;
}

describe('callSafely', () => {
  it('calls the callback once with the arguments given', () => {
    const calls: unknown[][] = [];
    callSafely((...args: unknown[]) => void calls.push(args), 'a', 2, { three: 3 });
    expect(calls).toEqual([['a', 2, { three: 3 }]]);
  });

  it.each(failingBothWays(new Error('the callback failed')))('drops what a callback that %s fails with', async (_how, callback) => {
    expect(await unhandledRejectionsOf(() => expect(() => callSafely(callback)).not.toThrow())).toEqual([]);
  });

  it('drops the rejection of a thenable that is no promise', async () => {
    const rejecting = { then: (_resolve: unknown, reject: (error: Error) => void) => reject(new Error('the thenable failed')) };
    expect(await unhandledRejectionsOf(() => callSafely(() => rejecting))).toEqual([]);
  });

  it('drops a thenable whose then throws', async () => {
    const throwing = {
      then() {
        throw new Error('then failed');
      },
    };
    expect(await unhandledRejectionsOf(() => expect(() => callSafely(() => throwing)).not.toThrow())).toEqual([]);
  });

  it.each([
    ['nothing', undefined],
    ['null', null],
    ['a value', 42],
    ['an object whose then is no function', { then: 'later' }],
  ])('takes a callback that answers %s', async (_name, value) => {
    expect(await unhandledRejectionsOf(() => expect(() => callSafely(() => value)).not.toThrow())).toEqual([]);
  });
});

describe('reasonOf', () => {
  it("answers an Error's message, and anything else as a string", () => {
    expect(reasonOf(new TypeError('bad'))).toBe('bad');
    expect(reasonOf('plain')).toBe('plain');
    expect(reasonOf(42)).toBe('42');
  });

  it('answers a fixed reason for a value whose message or toString throws', () => {
    const error = Object.defineProperty(new Error('x'), 'message', {
      get() {
        throw new Error('no message');
      },
    });
    expect(reasonOf(error)).toBe('an unprintable value');
    expect(reasonOf(Object.create(null))).toBe('an unprintable value');
  });
});
