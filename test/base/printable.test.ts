/** Text from a receiver's answer or a request made safe to print on one line. */
import { describe, expect, it } from 'vitest';
import { printable } from '../../src/base/printable.js';

describe('printable', () => {
  it('writes every control character as an escape, and leaves the rest alone', () => {
    expect(printable('a\u001b[31mb\u0007\u0000\u007f\u009bé ok')).toBe('a\\x1b[31mb\\x07\\x00\\x7f\\x9bé ok');
    expect(printable('line\r\nnext\ttab')).toBe('line\\r\\nnext\\ttab');
    expect(printable('webhook-id: msg_1')).toBe('webhook-id: msg_1');
  });

  it('writes the characters that split or reorder a line as escapes too', () => {
    expect(printable('a\u2028b\u2029c\u202eevil\u2066d\u200fe')).toBe('a\\u2028b\\u2029c\\u202eevil\\u2066d\\u200fe');
  });

  it('cuts the escaped text to 200 characters, or the bound given, marking the cut with …', () => {
    expect(printable('x'.repeat(200))).toBe('x'.repeat(200));
    expect(printable('x'.repeat(60 * 1024))).toBe(`${'x'.repeat(200)}…`);
    expect(printable('abcdef', 3)).toBe('abc…');
    // An escape is never cut in two, nor a character outside the BMP.
    expect(printable('ab\u001b', 5)).toBe('ab…');
    expect(printable('a😀b', 2)).toBe('a…');
    expect(printable('a😀b', 3)).toBe('a😀…');
  });
});
