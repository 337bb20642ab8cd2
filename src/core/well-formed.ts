/**
 * Well-formed UTF-16: no lone surrogate. A lone surrogate encodes to no
 * UTF-8, so a name holding one could be neither percent-encoded into a
 * header, nor looked up, nor logged faithfully.
 */

// A high surrogate not followed by a low one, or a low one not preceded by a high one.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Whether `value` holds no lone surrogate. */
export function isWellFormed(value: string): boolean {
  return !LONE_SURROGATE.test(value);
}
