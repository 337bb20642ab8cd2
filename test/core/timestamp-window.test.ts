/** The timestamp window at its edges, and what webhook-timestamp may look like. */
import { describe, expect, it } from 'vitest';
import { checkTimestamp } from '../../src/core/timestamp.js';
import { sign, verify, WebhookVerificationError } from '../../src/index.js';
import { codeOf } from '../helpers/error-code.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const NOW = 1_795_000_000;
const body = JSON.stringify({ id: 'evt_1', type: 'call.missed', data: { object: { id: 'call_1' } } });

/** verify()'s outcome for a request signed at `timestamp` seconds, checked at `nowMs`. */
function outcomeAt(timestamp: number, nowMs: number, toleranceMs?: number) {
  const headers = sign(body, { id: 'evt_1', timestamp, secret: SECRET });
  return codeOf(() => verify(body, headers, SECRET, { now: () => nowMs, ...(toleranceMs !== undefined && { toleranceMs }) }));
}

describe('the timestamp window', () => {
  it('accepts a timestamp exactly the tolerance away, on either side, and refuses one millisecond more', () => {
    const signedAt = NOW * 1000;
    expect(outcomeAt(NOW, signedAt + 300_000)).toBe('ok');
    expect(outcomeAt(NOW, signedAt + 300_001)).toBe('timestamp_too_old');
    expect(outcomeAt(NOW, signedAt - 300_000)).toBe('ok');
    expect(outcomeAt(NOW, signedAt - 300_001)).toBe('timestamp_too_new');
  });

  it('applies the configured tolerance, zero included', () => {
    const signedAt = NOW * 1000;
    expect(outcomeAt(NOW, signedAt + 10_000, 10_000)).toBe('ok');
    expect(outcomeAt(NOW, signedAt + 10_001, 10_000)).toBe('timestamp_too_old');
    expect(outcomeAt(NOW, signedAt - 10_001, 10_000)).toBe('timestamp_too_new');
    expect(outcomeAt(NOW, signedAt, 0)).toBe('ok');
    expect(outcomeAt(NOW, signedAt + 1, 0)).toBe('timestamp_too_old');
    expect(outcomeAt(NOW, signedAt - 1, 0)).toBe('timestamp_too_new');
  });

  it('returns the timestamp in seconds', () => {
    expect(checkTimestamp(String(NOW), NOW * 1000 + 5, 300_000)).toBe(NOW);
    expect(checkTimestamp('0', 0, 0)).toBe(0);
  });

  it('says how far off the timestamp is and what the tolerance is', () => {
    const messageOf = (run: () => unknown): string => {
      try {
        run();
      } catch (error) {
        if (error instanceof WebhookVerificationError) return error.message;
      }
      throw new Error('expected a WebhookVerificationError');
    };
    expect(messageOf(() => checkTimestamp(String(NOW), (NOW + 301) * 1000 + 500, 300_000))).toBe(
      'webhook-timestamp is 301 s in the past; the tolerance is 300 s',
    );
    expect(messageOf(() => checkTimestamp(String(NOW), (NOW - 302) * 1000 - 500, 300_000))).toBe(
      'webhook-timestamp is 302 s in the future; the tolerance is 300 s',
    );
    expect(messageOf(() => checkTimestamp('1e9', NOW * 1000, 300_000))).toBe('webhook-timestamp must be an integer number of seconds');
  });
});

describe('webhook-timestamp', () => {
  it.each([
    ['an exponent', '1.795e9'],
    ['a leading space', ` ${NOW}`],
    ['a trailing space', `${NOW} `],
    ['a fraction', `${NOW}.0`],
    ['a sign', `+${NOW}`],
    ['a minus', '-1'],
    ['letters before the digits', `t${NOW}`],
    ['letters after the digits', `${NOW}s`],
    ['sixteen digits', '1'.repeat(16)],
    ['a hexadecimal number', '0x6afcf880'],
    ['no digits', 'now'],
  ])('is refused with %s', (_name, header) => {
    expect(() => checkTimestamp(header, NOW * 1000, 300_000)).toThrow(expect.objectContaining({ code: 'invalid_timestamp' }));
  });

  it('may have one to fifteen digits, leading zeros included', () => {
    expect(checkTimestamp('0', 0, 0)).toBe(0);
    expect(checkTimestamp(`000${NOW}`, NOW * 1000, 0)).toBe(NOW);
    // Fifteen digits parse, and are then far in the future.
    expect(() => checkTimestamp('9'.repeat(15), NOW * 1000, 300_000)).toThrow(expect.objectContaining({ code: 'timestamp_too_new' }));
  });

  it.each([Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY])('needs a finite clock, not %s', (nowMs) => {
    expect(() => checkTimestamp(String(NOW), nowMs, 300_000)).toThrow(TypeError);
    expect(() => checkTimestamp(String(NOW), nowMs, 300_000)).toThrow(/the clock \(options\.now\) returned a non-finite number/);
  });
});
