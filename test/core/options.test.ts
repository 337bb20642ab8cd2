/** The verifier's options at the edges of what they accept, their defaults, and what their TypeErrors say. */
import { describe, expect, it } from 'vitest';
import { DEFAULT_VERIFY_OPTIONS, resolveVerifyOptions } from '../../src/core/options.js';
import { sign, verify, Webhook } from '../../src/index.js';
import { WebhookOptionsError } from '../../src/base/options-error.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

describe('resolveVerifyOptions', () => {
  it('answers the defaults for no options: five minutes, Date.now, 1 MiB', () => {
    expect(resolveVerifyOptions(undefined)).toBe(DEFAULT_VERIFY_OPTIONS);
    expect(DEFAULT_VERIFY_OPTIONS).toEqual({ toleranceMs: 300_000, now: Date.now, maxPayloadBytes: 1_048_576 });
    expect(resolveVerifyOptions({})).toEqual(DEFAULT_VERIFY_OPTIONS);
  });

  it('keeps what the caller set, in a new object', () => {
    const now = () => 5;
    const options = { toleranceMs: 10_000, now, maxPayloadBytes: 99 };
    const resolved = resolveVerifyOptions(options);
    expect(resolved).toEqual(options);
    expect(resolved).not.toBe(options);
  });

  it('accepts the smallest values: a zero tolerance, one of 1 ms, and a limit of 1 byte', () => {
    expect(resolveVerifyOptions({ toleranceMs: 0 }).toleranceMs).toBe(0);
    expect(resolveVerifyOptions({ toleranceMs: 1 }).toleranceMs).toBe(1);
    expect(resolveVerifyOptions({ maxPayloadBytes: 1 }).maxPayloadBytes).toBe(1);
    expect(resolveVerifyOptions({ maxPayloadBytes: Number.MAX_SAFE_INTEGER }).maxPayloadBytes).toBe(Number.MAX_SAFE_INTEGER);
  });

  it.each([
    ['a negative tolerance', { toleranceMs: -1 }, 'toleranceMs must be a whole number of milliseconds >= 0'],
    ['a fractional tolerance', { toleranceMs: 0.5 }, 'toleranceMs must be a whole number of milliseconds >= 0'],
    ['an infinite tolerance', { toleranceMs: Number.POSITIVE_INFINITY }, 'toleranceMs must be a whole number of milliseconds >= 0'],
    ['a NaN tolerance', { toleranceMs: Number.NaN }, 'toleranceMs must be a whole number of milliseconds >= 0'],
    ['a tolerance as a string', { toleranceMs: '300000' }, 'toleranceMs must be a whole number of milliseconds >= 0'],
    ['a clock that is no function', { now: 0 }, 'now must be a function'],
    ['a null clock', { now: null }, 'now must be a function'],
    ['a negative limit', { maxPayloadBytes: -1 }, 'maxPayloadBytes must be a positive integer'],
    ['a limit past the safe integers', { maxPayloadBytes: 2 ** 53 }, 'maxPayloadBytes must be a positive integer'],
    ['a limit as a string', { maxPayloadBytes: '1024' }, 'maxPayloadBytes must be a positive integer'],
    ['null options', null, 'verify options must be an object'],
    ['options that are a number', 5, 'verify options must be an object'],
  ])('refuses %s, saying which option and why', (_name, options, says) => {
    expect(() => resolveVerifyOptions(options as never)).toThrow(new WebhookOptionsError(`svc-webhooks: ${says}`));
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

