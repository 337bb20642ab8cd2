/** callSafely: the user's callback runs with its arguments, and nothing it throws or rejects with gets out. */
import { describe, expect, it } from 'vitest';
import { callSafely } from '../../src/receive/call-safely.js';
import { failingBothWays } from '../helpers/failing-callbacks.js';

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
