/** Options at the edges of what they accept, their defaults, and what their TypeErrors say. */
import { describe, expect, it } from 'vitest';
import { checkCallback, checkDuration, MAX_TIMER_MS } from '../../src/core/option-checks.js';
import { DEFAULT_VERIFY_OPTIONS, resolveVerifyOptions } from '../../src/core/options.js';
import { sign, verify, Webhook } from '../../src/index.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

describe('resolveVerifyOptions', () => {
  it('answers the defaults for no options: five minutes, Date.now, 1 MiB', () => {
    expect(resolveVerifyOptions(undefined)).toBe(DEFAULT_VERIFY_OPTIONS);
    expect(DEFAULT_VERIFY_OPTIONS).toEqual({ toleranceSeconds: 300, now: Date.now, maxPayloadBytes: 1_048_576 });
    expect(resolveVerifyOptions({})).toEqual(DEFAULT_VERIFY_OPTIONS);
  });

  it('keeps what the caller set, in a new object', () => {
    const now = () => 5;
    const options = { toleranceSeconds: 10, now, maxPayloadBytes: 99 };
    const resolved = resolveVerifyOptions(options);
    expect(resolved).toEqual(options);
    expect(resolved).not.toBe(options);
  });

  it('accepts the smallest values: a zero tolerance, a fractional one, and a limit of 1 byte', () => {
    expect(resolveVerifyOptions({ toleranceSeconds: 0 }).toleranceSeconds).toBe(0);
    expect(resolveVerifyOptions({ toleranceSeconds: 0.5 }).toleranceSeconds).toBe(0.5);
    expect(resolveVerifyOptions({ maxPayloadBytes: 1 }).maxPayloadBytes).toBe(1);
    expect(resolveVerifyOptions({ maxPayloadBytes: Number.MAX_SAFE_INTEGER }).maxPayloadBytes).toBe(Number.MAX_SAFE_INTEGER);
  });

  it.each([
    ['a negative tolerance', { toleranceSeconds: -0.5 }, 'toleranceSeconds must be a finite number >= 0'],
    ['an infinite tolerance', { toleranceSeconds: Number.POSITIVE_INFINITY }, 'toleranceSeconds must be a finite number >= 0'],
    ['a NaN tolerance', { toleranceSeconds: Number.NaN }, 'toleranceSeconds must be a finite number >= 0'],
    ['a tolerance as a string', { toleranceSeconds: '300' }, 'toleranceSeconds must be a finite number >= 0'],
    ['a clock that is no function', { now: 0 }, 'now must be a function'],
    ['a null clock', { now: null }, 'now must be a function'],
    ['a negative limit', { maxPayloadBytes: -1 }, 'maxPayloadBytes must be a positive integer'],
    ['a limit past the safe integers', { maxPayloadBytes: 2 ** 53 }, 'maxPayloadBytes must be a positive integer'],
    ['a limit as a string', { maxPayloadBytes: '1024' }, 'maxPayloadBytes must be a positive integer'],
    ['null options', null, 'options must be an object'],
    ['options that are a number', 5, 'options must be an object'],
  ])('refuses %s, saying which option and why', (_name, options, says) => {
    expect(() => resolveVerifyOptions(options as never)).toThrow(new TypeError(`svc-webhooks: ${says}`));
  });

  it('uses Date.now when no clock is given', () => {
    const body = JSON.stringify({ id: 'evt_1', type: 'call.missed', data: { object: { id: 'call_1' } } });
    const current = sign(body, { id: 'evt_1', timestamp: new Date(), secret: SECRET });
    expect(verify(body, current, SECRET).id).toBe('evt_1');
    expect(new Webhook(SECRET).verify(body, current).id).toBe('evt_1');
    const stale = sign(body, { id: 'evt_1', timestamp: Math.floor(Date.now() / 1000) - 3600, secret: SECRET });
    expect(() => verify(body, stale, SECRET)).toThrow(expect.objectContaining({ code: 'timestamp_too_old' }));
  });
});

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
      new TypeError(`svc-webhooks: leaseMs must be a whole number of milliseconds from 1 to ${shown}`),
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
    expect(() => checkCallback('onError', value)).toThrow(new TypeError('svc-webhooks: onError must be a function'));
  });
});
