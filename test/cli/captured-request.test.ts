import { Buffer } from 'node:buffer';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/cli/args.js';
import { parseCapturedRequest } from '../../src/cli/captured-request.js';

const parse = (text: string) => parseCapturedRequest(Buffer.from(text, 'latin1'), 'capture');

describe('parseCapturedRequest', () => {
  it('reads headers by lower-case name, repeats kept, and the body by Content-Length', () => {
    const request = parse('POST /hooks HTTP/1.1\r\nWebhook-Id: a\r\nX: 1\r\nx: 2\r\nContent-Length: 5\r\n\r\nhello, and bytes past the length');
    expect(request.headers).toEqual({ 'webhook-id': ['a'], x: ['1', '2'], 'content-length': ['5'] });
    expect(request.body.toString()).toBe('hello');
  });

  it('takes a capture saved with LF line ends and without a request line, the body being the rest', () => {
    const request = parse('webhook-id: a\nwebhook-timestamp: 1\n\n{"a":\r\n1}');
    expect(request.headers).toEqual({ 'webhook-id': ['a'], 'webhook-timestamp': ['1'] });
    expect(request.body.toString()).toBe('{"a":\r\n1}');
  });

  it('keeps body bytes that are not UTF-8 as they are', () => {
    expect([...parse('a: 1\r\n\r\n\xc3\x28').body]).toEqual([0xc3, 0x28]);
  });

  it('joins the chunks of a chunked body, extensions ignored', () => {
    const request = parse('POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\nabc\r\na\r\n0123456789\r\n0\r\n\r\n');
    expect(request.body.toString()).toBe('abc0123456789');
  });

  it.each([
    ['no blank line after the headers', 'POST / HTTP/1.1\r\na: 1\r\n'],
    ['a body shorter than Content-Length', 'a: 1\r\ncontent-length: 10\r\n\r\nshort'],
    ['a truncated chunk', 'transfer-encoding: chunked\r\n\r\nff\r\nabc'],
    ['a chunk size that is not hex', 'transfer-encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n'],
    ['a header line without a colon', 'POST / HTTP/1.1\r\nnot a header\r\n\r\n'],
  ])('refuses %s with a usage error', (_name, text) => {
    expect(() => parse(text)).toThrow(UsageError);
  });
});
