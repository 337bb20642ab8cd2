import { Buffer } from 'node:buffer';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../../src/cli/shared/args.js';
import { parseCapturedRequest } from '../../../src/cli/verify/captured-request.js';

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

  it.each(['-6', '+3', '0x3', '', 'zz', '123456789'])('refuses a chunk size of "%s" rather than step back or loop', (size) => {
    const capture = `POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n${size}\r\nxyz\r\n0\r\n\r\n`;
    expect(() => parse(capture)).toThrow(new UsageError('capture: a chunk size that is no hex number'));
  });

  it('keeps headers named like Object.prototype members as headers', () => {
    const request = parse('Constructor: a\r\n__proto__: b\r\ntoString: c\r\nhasOwnProperty: d\r\n\r\n{}');
    expect(Object.entries(request.headers)).toEqual([
      ['constructor', ['a']],
      ['__proto__', ['b']],
      ['tostring', ['c']],
      ['hasownproperty', ['d']],
    ]);
  });

  it('prints a bad header line escaped: escape sequences never reach the terminal', () => {
    expect(() => parse('ok: 1\r\n\x1b[31mred\x07\r\n\r\n')).toThrow(new UsageError('capture: not a "name: value" header line: \\x1b[31mred\\x07'));
  });

  it('prints a bad Content-Length escaped and cut short', () => {
    expect(() => parse('content-length: 9\x1b[2J\x07\r\n\r\nhello')).toThrow(
      new UsageError('capture: Content-Length is 9\\x1b[2J\\x07 but 5 bytes follow the headers'),
    );
    expect(() => parse(`content-length: ${'9'.repeat(60 * 1024)}\r\n\r\nhello`)).toThrow(
      new UsageError(`capture: Content-Length is ${'9'.repeat(200)}… but 5 bytes follow the headers`),
    );
  });

  it('joins the chunks of a chunked body, extensions and the blanks around a size ignored', () => {
    const request = parse('POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\nabc\r\na \r\n0123456789\r\n 2 ;n\r\nxy\r\n0\r\n\r\n');
    expect(request.body.toString()).toBe('abc0123456789xy');
  });

  it('reads the request line of HTTP/2 and of a capture saved with LF line ends', () => {
    expect(parse('POST /hooks HTTP/2\r\na: 1\r\n\r\n').headers).toEqual({ a: ['1'] });
    expect(parse('POST /hooks HTTP/1.1\na: 1\n\n').headers).toEqual({ a: ['1'] });
  });

  it('keeps a first header whose value looks like a request line', () => {
    expect(parse('Via: POST /hooks HTTP/1.1\r\n\r\n').headers).toEqual({ via: ['POST /hooks HTTP/1.1'] });
  });

  it('ends the headers at the first blank line, CRLF or LF, whatever the body holds', () => {
    expect(parse('a: 1\r\n\r\nline\n\nline').body.toString()).toBe('line\n\nline');
    expect(parse('a: 1\n\nline\r\n\r\nline').body.toString()).toBe('line\r\n\r\nline');
  });

  it('de-chunks when any Transfer-Encoding names chunked, sizes of one hex digit or more', () => {
    const request = parse('transfer-encoding: gzip\r\ntransfer-encoding: Chunked\r\n\r\na\r\n0123456789\r\n10\r\n0123456789abcdef\r\n0\r\n\r\n');
    expect(request.body.toString()).toBe('01234567890123456789abcdef');
  });

  it.each([
    ['no blank line after the headers', 'POST / HTTP/1.1\r\na: 1\r\n', 'capture: no blank line ends the headers'],
    ['a body shorter than Content-Length', 'a: 1\r\ncontent-length: 10\r\n\r\nshort', 'capture: Content-Length is 10 but 5 bytes follow the headers'],
    ['a signed Content-Length', 'content-length: +5\r\n\r\nhello', 'capture: Content-Length is +5 but 5 bytes follow the headers'],
    ['a Content-Length with a fraction', 'content-length: 5.0\r\n\r\nhello', 'capture: Content-Length is 5.0 but 5 bytes follow the headers'],
    ['a truncated chunk', 'transfer-encoding: chunked\r\n\r\nff\r\nabc', 'capture: the chunked body ends before its last chunk'],
    ['a chunk running past the end', 'transfer-encoding: chunked\r\n\r\nff\r\nabc\r\n0\r\n\r\n', 'capture: the chunked body ends before its last chunk'],
    ['a chunk ending the capture, with no last chunk after it', 'transfer-encoding: chunked\r\n\r\n3\r\nabc', 'capture: the chunked body ends before its last chunk'],
    ['a last chunk cut before its line end', 'transfer-encoding: chunked\r\n\r\n00', 'capture: the chunked body ends before its last chunk'],
    ['a chunk size that is not hex', 'transfer-encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n', 'capture: a chunk size that is no hex number'],
    ['a header line without a colon', 'POST / HTTP/1.1\r\nnot a header\r\n\r\n', 'capture: not a "name: value" header line: not a header'],
    ['a request line with more after the version', 'POST / HTTP/1.1 extra\r\n\r\n', 'capture: not a "name: value" header line: POST / HTTP/1.1 extra'],
  ])('refuses %s with a usage error saying why', (_name, text, message) => {
    expect(() => parse(text)).toThrow(new UsageError(message));
  });
});
