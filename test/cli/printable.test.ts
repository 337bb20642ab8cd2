/** Text from a request made safe for a terminal. */
import { describe, expect, it } from 'vitest';
import { printable } from '../../src/cli/printable.js';

describe('printable', () => {
  it('writes every control character as an escape, and leaves the rest alone', () => {
    expect(printable('a\u001b[31mb\u0007\u0000\u007f\u009bé ok')).toBe('a\\x1b[31mb\\x07\\x00\\x7f\\x9bé ok');
    expect(printable('line\r\nnext\ttab')).toBe('line\\r\\nnext\\ttab');
    expect(printable('webhook-id: msg_1')).toBe('webhook-id: msg_1');
  });
});
