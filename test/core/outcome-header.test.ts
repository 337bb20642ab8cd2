/** The `svc-webhooks-outcome` header's value: written by an entry, read by the command line. */
import { describe, expect, it } from 'vitest';
import { formatOutcome, parseOutcome } from '../../src/core/outcome-header.js';

describe('the outcome header', () => {
  it('writes the outcome, then the parameters it has, in a fixed order', () => {
    expect(formatOutcome({ outcome: 'processed', handlerMs: 12, keyId: 'k2025', tenant: 'acme' })).toBe('processed; handler-ms=12; key-id=k2025; tenant=acme');
    expect(formatOutcome({ outcome: 'invalid_signature' })).toBe('invalid_signature');
    expect(formatOutcome({ outcome: 'duplicate', keyId: '0' })).toBe('duplicate; key-id=0');
  });

  it('percent-encodes values, so a tenant from the path can neither break the header nor add a parameter', () => {
    const tenant = 'ac me; key-id=forged\r\nx: 1 é';
    const value = formatOutcome({ outcome: 'processed', tenant });
    expect(value).toBe('processed; tenant=ac%20me%3B%20key-id%3Dforged%0D%0Ax%3A%201%20%C3%A9');
    expect(parseOutcome(value)).toEqual({ outcome: 'processed', tenant });
  });

  it('reads back what it writes', () => {
    const report = { outcome: 'handler_failed', handlerMs: 7, keyId: 'old', tenant: 'beta' };
    expect(parseOutcome(formatOutcome(report))).toEqual(report);
  });

  it.each([
    ['an outcome in another form', 'Processed'],
    ['an outcome with more after it', 'processed1; key-id=0'],
    ['an empty value', ''],
    ['a handler time with more after it', 'processed; handler-ms=12a'],
    ['a handler time that is no number', 'processed; handler-ms='],
    ['no outcome', '; key-id=0'],
    ['a handler time that is no whole number', 'processed; handler-ms=1.5'],
    ['a handler time of more digits than stay exact', `processed; handler-ms=${'9'.repeat(16)}`],
    ['a value that does not decode', 'processed; tenant=%E0%A4%A'],
  ])('reads %s as no report', (_name, value) => {
    expect(parseOutcome(value)).toBeUndefined();
  });

  it('takes the first of a repeated parameter', () => {
    expect(parseOutcome('processed; key-id=k1; tenant=a; key-id=k2; tenant=b; handler-ms=3; handler-ms=x')).toEqual({ outcome: 'processed', handlerMs: 3, keyId: 'k1', tenant: 'a' });
    expect(parseOutcome(`processed; handler-ms=${'9'.repeat(15)}`)).toEqual({ outcome: 'processed', handlerMs: 999_999_999_999_999 });
  });

  it('skips parameters it does not know, and parts without a value', () => {
    expect(parseOutcome('queued; region=eu; key-id=0; tenant')).toEqual({ outcome: 'queued', keyId: '0' });
  });

  it('reads a value spaced otherwise, and a handler time of several digits', () => {
    expect(parseOutcome('  processed ;handler-ms=120 ;  key-id=k1  ')).toEqual({ outcome: 'processed', handlerMs: 120, keyId: 'k1' });
  });

  it("skips a part without `=` even when it starts with a parameter's name", () => {
    expect(parseOutcome('queued; key-idx; tenantz')).toEqual({ outcome: 'queued' });
  });
});
