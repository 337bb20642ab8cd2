import { describe, expect, it } from 'vitest';
import { noPositionals, onePositional, parseCommandArgs, receiverUrl, required, secrets, UsageError, wholeNumber } from '../../src/cli/args.js';

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
    expect(usageMessage(() => onePositional(['a', 'b', 'c'], '<url>'))).toBe('unexpected arguments: b c');
  });

  it('takes none where none is wanted', () => {
    expect(() => noPositionals([])).not.toThrow();
    expect(usageMessage(() => noPositionals(['a', 'b']))).toBe('unexpected arguments: a b');
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
    expect(usageMessage(() => wholeNumber(text, 'retries'))).toBe(`--retries must be a whole number of at least 0, not "${text}"`);
  });

  it('refuses a number below the least', () => {
    expect(usageMessage(() => wholeNumber('0', 'count', 1))).toBe('--count must be a whole number of at least 1, not "0"');
  });
});

describe('receiverUrl', () => {
  it('answers an http or https URL in its normal form', () => {
    expect(receiverUrl('http://127.0.0.1:8080')).toBe('http://127.0.0.1:8080/');
    expect(receiverUrl('HTTPS://Example.com/hooks?a=1')).toBe('https://example.com/hooks?a=1');
  });

  it('refuses what is not a URL, or not http(s)', () => {
    expect(usageMessage(() => receiverUrl('localhost'))).toBe('not a URL: localhost');
    expect(usageMessage(() => receiverUrl('ftp://example.com/'))).toBe('the URL must be http or https: ftp://example.com/');
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
    expect(usageMessage(() => secrets(undefined))).toBe('--secret is required');
  });
});
