import { describe, expect, it } from 'vitest';
import { noPositionals, onePositional, parseCommandArgs, receiverUrl, required, secrets, UsageError, wholeNumber } from '../../../src/cli/shared/args.js';

/** The message of the UsageError `act` throws. */
function usageMessage(act: () => unknown): string {
  try {
    act();
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).name).toBe('UsageError');
    return (error as Error).message;
  }
  throw new Error('no UsageError was thrown');
}

describe('parseCommandArgs', () => {
  it('answers the values and positionals, and calls a parse mistake a usage error', () => {
    expect(parseCommandArgs(['x', '--n', '1'], { n: { type: 'string' } })).toEqual({ values: { n: '1' }, positionals: ['x'] });
    expect(usageMessage(() => parseCommandArgs(['--n'], { n: { type: 'string' } }))).toMatch(/^Option '--n <value>' argument missing/);
  });

  it('lets anything that is not a mistake on the command line go on as it is', () => {
    expect(() => parseCommandArgs([], { n: { type: 'number' as 'string' } })).toThrow(expect.objectContaining({ name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' }));
    const unreadable = new Error('unreadable arguments');
    const args = {
      [Symbol.iterator]: () => {
        throw unreadable;
      },
    } as unknown as string[];
    expect(() => parseCommandArgs(args, {})).toThrow(unreadable);
  });
});

describe('positionals', () => {
  it('takes exactly one where one is wanted', () => {
    expect(onePositional(['http://a/'], '<url>')).toBe('http://a/');
    expect(usageMessage(() => onePositional([], '<url>'))).toBe('<url> is missing');
    expect(usageMessage(() => onePositional(['a', 'b', 'c'], '<url>'))).toBe('2 unexpected arguments after <url> (not shown, in case one is a secret: give a secret with --secret or WEBHOOK_SECRET)');
    expect(usageMessage(() => onePositional(['a', 'whsec_c2VjcmV0'], '<url>'))).not.toContain('c2VjcmV0');
  });

  it('takes none where none is wanted', () => {
    expect(() => noPositionals([])).not.toThrow();
    expect(usageMessage(() => noPositionals(['a', 'legacy-secret']))).toBe('2 unexpected arguments where this command takes none (not shown, in case one is a secret: give a secret with --secret or WEBHOOK_SECRET)');
    expect(usageMessage(() => noPositionals(['a']))).toBe('1 unexpected argument where this command takes none (not shown, in case one is a secret: give a secret with --secret or WEBHOOK_SECRET)');
  });
});

describe('required', () => {
  it('answers a value given, even an empty one, and names the option missing', () => {
    expect(required('', 'id')).toBe('');
    expect(usageMessage(() => required(undefined, 'id'))).toBe('--id is required');
  });
});

describe('wholeNumber', () => {
  it.each([
    ['0', 0, 0],
    ['7', 0, 7],
    ['1', 1, 1],
    ['007', 0, 7],
    ['999999999999999', 0, 999_999_999_999_999],
  ])('reads %s (at least %i)', (text, min, value) => {
    expect(wholeNumber(text, 'n', min)).toBe(value);
  });

  it('takes 0 by default', () => {
    expect(wholeNumber('0', 'n')).toBe(0);
  });

  it.each(['', '-1', '1.5', '1e3', '0x10', ' 1', '1 ', 'ten', '1000000000000000'])('refuses %j', (text) => {
    expect(usageMessage(() => wholeNumber(text, 'retries'))).toBe('--retries must be a whole number of at least 0');
  });

  it('refuses a number below the least', () => {
    expect(usageMessage(() => wholeNumber('0', 'count', 1))).toBe('--count must be a whole number of at least 1');
  });

  it('takes a number up to the most given, and names both bounds when it refuses one', () => {
    expect([wholeNumber('1', 'copies', 1, 100), wholeNumber('100', 'copies', 1, 100)]).toEqual([1, 100]);
    for (const text of ['0', '101', 'many']) expect(usageMessage(() => wholeNumber(text, 'copies', 1, 100))).toBe('--copies must be a whole number from 1 to 100');
  });
});

describe('receiverUrl', () => {
  it('answers an http or https URL in its normal form', () => {
    expect(receiverUrl('http://127.0.0.1:8080')).toBe('http://127.0.0.1:8080/');
    expect(receiverUrl('HTTPS://Example.com/hooks?a=1')).toBe('https://example.com/hooks?a=1');
  });

  it('refuses what is not a URL, or not http(s)', () => {
    expect(usageMessage(() => receiverUrl('whsec_c2VjcmV0LWluLXRoZS11cmw='))).toBe("the first argument is not a URL: give the receiver's http(s) URL there");
    expect(usageMessage(() => receiverUrl('ftp://example.com/'))).toBe('the URL must be http or https');
  });

  it('refuses a URL with a user name or password, and prints neither', () => {
    for (const url of ['https://hook:s3cret-pass@example.com/webhooks', 'https://s3cret-pass@example.com/']) {
      const message = usageMessage(() => receiverUrl(url));
      expect(message).toBe("the URL carries a user name or password: give the receiver's URL without credentials");
      expect(message).not.toContain('s3cret-pass');
    }
  });
});

describe('secrets', () => {
  it('answers every secret given, whsec_ or legacy', () => {
    const given = ['whsec_c2VjcmV0', 'legacy'];
    const answered = secrets(given);
    expect(answered).toEqual(given);
    expect(answered).not.toBe(given);
  });

  it("refuses a secret the core would refuse, in the core's words", () => {
    expect(usageMessage(() => secrets(['whsec_c2VjcmV0', '']))).toBe('--secret: the secret is empty');
    expect(usageMessage(() => secrets(undefined, {}))).toBe('--secret is required (or set WEBHOOK_SECRET)');
    expect(usageMessage(() => secrets(undefined, { WEBHOOK_SECRET: '' }))).toBe('--secret is required (or set WEBHOOK_SECRET)');
  });

  it('reads the secret from WEBHOOK_SECRET when --secret is absent, and checks it the same way', () => {
    expect(secrets(undefined, { WEBHOOK_SECRET: 'whsec_c2VjcmV0' })).toEqual(['whsec_c2VjcmV0']);
    expect(secrets(['whsec_b3RoZXI='], { WEBHOOK_SECRET: 'whsec_c2VjcmV0' })).toEqual(['whsec_b3RoZXI=']);
    expect(usageMessage(() => secrets(undefined, { WEBHOOK_SECRET: 'whsec_!!' }))).toMatch(/^--secret: a secret starting with "whsec_" must continue/);
  });
});
