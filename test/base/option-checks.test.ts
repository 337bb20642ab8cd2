/** The checks options share: durations, callbacks, policies, option objects, and the options of rc.1 in their new places. */
import { describe, expect, it } from 'vitest';
import { checkCallback, checkDuration, checkOptionsObject, checkPolicy, checkRenamed, MAX_TIMER_MS, movedInto } from '../../src/base/option-checks.js';
import { WebhookOptionsError } from '../../src/base/options-error.js';

describe('checkDuration', () => {
  it('accepts whole milliseconds from 1 to the maximum', () => {
    for (const ms of [1, 2, Number.MAX_SAFE_INTEGER]) expect(() => checkDuration('leaseMs', ms)).not.toThrow();
    expect(() => checkDuration('sweepIntervalMs', MAX_TIMER_MS, MAX_TIMER_MS)).not.toThrow();
  });

  it('puts the timer maximum at 2^31 - 1 ms, the longest delay a timer keeps', () => {
    expect(MAX_TIMER_MS).toBe(2_147_483_647);
  });

  it.each([
    [0, undefined, Number.MAX_SAFE_INTEGER],
    [-1, undefined, Number.MAX_SAFE_INTEGER],
    [1.5, undefined, Number.MAX_SAFE_INTEGER],
    [Number.NaN, undefined, Number.MAX_SAFE_INTEGER],
    [2 ** 53, undefined, Number.MAX_SAFE_INTEGER],
    [MAX_TIMER_MS + 1, MAX_TIMER_MS, MAX_TIMER_MS],
    [11, 10, 10],
  ])('refuses %s with a maximum of %s, saying the range', (ms, max, shown) => {
    expect(() => checkDuration('leaseMs', ms, max)).toThrow(
      new WebhookOptionsError(`svc-webhooks: leaseMs must be a whole number of milliseconds from 1 to ${shown}`),
    );
  });

  it('refuses a duration that is not a number', () => {
    expect(() => checkDuration('leaseMs', '100' as never)).toThrow(TypeError);
  });
});

describe('checkCallback', () => {
  it('accepts a function or nothing', () => {
    expect(() => checkCallback('onError', () => {})).not.toThrow();
    expect(() => checkCallback('onError', undefined)).not.toThrow();
  });

  it.each([null, 'log', 1, {}])('refuses %s, naming the option', (value) => {
    expect(() => checkCallback('onError', value)).toThrow(new WebhookOptionsError('svc-webhooks: onError must be a function'));
  });
});

describe('checkPolicy', () => {
  it('answers one of the allowed values, or undefined for none given', () => {
    expect(checkPolicy('unknownEvents', 'reject', ['accept', 'reject'])).toBe('reject');
    expect(checkPolicy('unknownEvents', undefined, ['accept', 'reject'])).toBeUndefined();
  });

  it.each([['a value not allowed', 'ignore'], ['null', null], ['a function', () => {}]])('refuses %s, listing the values', (_name, value) => {
    expect(() => checkPolicy('unknownEvents', value, ['accept', 'reject'])).toThrow(new WebhookOptionsError("svc-webhooks: unknownEvents must be 'accept' or 'reject'"));
  });
});

describe('checkOptionsObject', () => {
  it('accepts an object or nothing', () => {
    expect(() => checkOptionsObject('enqueue', {})).not.toThrow();
    expect(() => checkOptionsObject('enqueue', undefined)).not.toThrow();
  });

  it.each([null, 5, 'x'])('refuses %s, naming whose options', (value) => {
    expect(() => checkOptionsObject('enqueue', value)).toThrow(new WebhookOptionsError('svc-webhooks: enqueue options must be an object'));
  });
});

describe('checkRenamed', () => {
  const moved = { leaseMs: 'dedup.leaseMs' };

  it('refuses an option given in its old place, saying the new one', () => {
    expect(() => checkRenamed({ leaseMs: 30_000 }, moved)).toThrow(new WebhookOptionsError('svc-webhooks: the option leaseMs is now dedup.leaseMs'));
    expect(() => checkRenamed({ leaseMs: undefined }, moved)).toThrow(TypeError);
  });

  it('takes options without old names, and does not look up the prototype', () => {
    expect(() => checkRenamed({ dedup: { leaseMs: 30_000 } }, moved)).not.toThrow();
    expect(() => checkRenamed(Object.create({ leaseMs: 30_000 }) as object, moved)).not.toThrow();
  });
});

describe('movedInto', () => {
  it("names each key that is none of the caller's own by its place in the group", () => {
    const own = new Set(['on', 'worker']);
    expect(movedInto({ on: {}, worker: {}, concurrency: 5, connection: {} }, own, 'worker', "BullMQ's other Worker options")).toEqual({
      concurrency: "worker.concurrency, with BullMQ's other Worker options",
      connection: "worker.connection, with BullMQ's other Worker options",
    });
    expect(movedInto({ on: {} }, own, 'worker', 'the rest')).toEqual({});
  });
});
