/** Calling the user's code safely: callbacks whose outcome nobody waits for, the kind and reason of anything thrown, and thenables. */
import { describe, expect, it } from 'vitest';
import { callSafely, isThenable, kindOf, reasonOf, whenSettled } from '../../src/base/user-code.js';
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

describe('kindOf', () => {
  it("answers an Error's class name, and the type of anything else thrown", () => {
    expect(kindOf(new TypeError('secret detail'))).toBe('TypeError');
    expect(kindOf(Object.assign(new Error('x'), { name: 'StoreError' }))).toBe('StoreError');
    expect(kindOf('a string')).toBe('string');
    expect(kindOf(undefined)).toBe('undefined');
  });
});

describe('isThenable', () => {
  it('tells a promise or any object with a then function from a plain value', () => {
    expect(isThenable(Promise.resolve(1))).toBe(true);
    expect(isThenable({ then: () => undefined })).toBe(true);
    expect(isThenable(42)).toBe(false);
    expect(isThenable(null)).toBe(false);
    expect(isThenable({ then: 'later' })).toBe(false);
  });
});

describe('whenSettled', () => {
  const double = (value: number): number => value * 2;
  const caught = (error: unknown): number => (error instanceof Error ? -1 : -2);

  it('answers a value at hand at once, not a promise', () => {
    expect(whenSettled(21, double)).toBe(42);
    expect(whenSettled(21, double, caught)).toBe(42);
  });

  it('answers a promise of what a promise or any thenable settles to, a rejection through onRejected', async () => {
    await expect(whenSettled(Promise.resolve(21), double)).resolves.toBe(42);
    await expect(whenSettled({ then: (resolve: (value: number) => void) => resolve(21) } as PromiseLike<number>, double)).resolves.toBe(42);
    await expect(whenSettled(Promise.reject(new Error('down')), double, caught)).resolves.toBe(-1);
  });

  it("takes a thenable whose then throws as a rejection, and passes a rejection on without onRejected", async () => {
    const throwing = { then: () => { throw 'no'; } } as unknown as PromiseLike<number>;
    await expect(whenSettled(throwing, double, caught)).resolves.toBe(-2);
    const failure = new Error('down');
    await expect(whenSettled(Promise.reject(failure), double)).rejects.toBe(failure);
  });
});
