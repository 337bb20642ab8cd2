/** errorChain: an error and its causes, outermost first, as the store hints read them. */
import { describe, expect, it } from 'vitest';
import { errorChain } from '../../src/stores/error-chain.js';

/** `length` errors, each the cause of the one before; the outermost first. */
function nested(length: number): Error[] {
  const errors = Array.from({ length }, (_, i) => new Error(`level ${i}`));
  errors.forEach((error, i) => {
    if (i + 1 < length) error.cause = errors[i + 1];
  });
  return errors;
}

describe('errorChain', () => {
  it('lists an error and its causes, outermost first', () => {
    const errors = nested(3);
    expect(errorChain(errors[0])).toEqual(errors);
    expect(errorChain(errors[0])[2]).toBe(errors[2]);
  });

  it('is empty for undefined and null, and ends at a cause that is undefined or null', () => {
    expect(errorChain(undefined)).toEqual([]);
    expect(errorChain(null)).toEqual([]);
    const withNullCause = Object.assign(new Error('outer'), { cause: null });
    expect(errorChain(withNullCause)).toEqual([withNullCause]);
    const withoutCause = new Error('alone');
    expect(errorChain(withoutCause)).toEqual([withoutCause]);
  });

  it('takes what is no error as a link of its own, causes included', () => {
    expect(errorChain('connection lost')).toEqual(['connection lost']);
    expect(errorChain(0)).toEqual([0]);
    const plain = { message: 'plain', cause: 'the string inside' };
    expect(errorChain(plain)).toEqual([plain, 'the string inside']);
  });

  it('follows at most eight links', () => {
    const errors = nested(12);
    expect(errorChain(errors[0])).toEqual(errors.slice(0, 8));
    const eight = nested(8);
    expect(errorChain(eight[0])).toEqual(eight);
  });

  it('stops at a cycle, listing each error once', () => {
    const [first, second] = nested(2) as [Error, Error];
    second.cause = first;
    expect(errorChain(first)).toEqual([first, second]);
    const own = new Error('its own cause');
    own.cause = own;
    expect(errorChain(own)).toEqual([own]);
    // A cycle that starts past the first link ends there too.
    const [outer, a, b] = nested(3) as [Error, Error, Error];
    b.cause = a;
    expect(errorChain(outer)).toEqual([outer, a, b]);
  });
});
