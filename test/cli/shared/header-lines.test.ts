import { describe, expect, it } from 'vitest';
import { UsageError } from '../../../src/cli/shared/args.js';
import { curlArguments, headerLines, parseHeaderText } from '../../../src/cli/shared/header-lines.js';

const parse = (text: string) => parseHeaderText(text, '--headers');

describe('parseHeaderText', () => {
  it('reads "name: value" lines by lower-case name, trimmed, repeats kept, blank lines skipped', () => {
    expect(parse('Webhook-Id : msg_1 \r\n   \n\nX: 1\nx:2\nEmpty:\nurl: http://a:80/\n')).toEqual({
      'webhook-id': ['msg_1'],
      x: ['1', '2'],
      empty: [''],
      url: ['http://a:80/'],
    });
  });

  it('reads a JSON object, after leading blanks, a list standing for repeats', () => {
    expect(parse('\n  {" Webhook-Id ": " msg_1", "x": ["1", "2"]}')).toEqual({ 'webhook-id': ['msg_1'], x: ['1', '2'] });
  });

  it.each([
    ['a line without a colon', 'webhook-id msg_1', '--headers: not a "name: value" header line: webhook-id msg_1'],
    ['a line without a name', ': msg_1', '--headers: not a "name: value" header line: : msg_1'],
    ['a long line, cut to 80 characters', 'x'.repeat(100), `--headers: not a "name: value" header line: ${'x'.repeat(80)}…`],
    ['a line of controls, cut to 80 characters once escaped', '\x1b'.repeat(100), `--headers: not a "name: value" header line: ${'\\x1b'.repeat(20)}…`],
    ['text that starts as JSON but is not', '{"webhook-id": ', '--headers: starts with "{" but is not JSON'],
    ['a JSON value that is not a string', '{"webhook-timestamp": 1795000000}', '--headers: the value of "webhook-timestamp" is not a string'],
    ['a JSON list holding a number', '{"x": ["1", 2]}', '--headers: the value of "x" is not a string'],
    ['a long JSON name, escaped and cut short', JSON.stringify({ [`\r\n${'n'.repeat(60 * 1024)}`]: 1 }), `--headers: the value of "\\r\\n${'n'.repeat(196)}…" is not a string`],
  ])('refuses %s', (_name, text, message) => {
    expect(() => parse(text)).toThrow(new UsageError(message));
  });
});

describe('headerLines and curlArguments', () => {
  const headers = { 'webhook-id': "msg_it's", 'webhook-timestamp': '1' };

  it('print each header as a "name: value" line', () => {
    expect(headerLines(headers)).toEqual(["webhook-id: msg_it's", 'webhook-timestamp: 1']);
  });

  it('print them as -H arguments on one line, single quotes escaped for a POSIX shell', () => {
    expect(curlArguments(headers)).toBe(`-H 'webhook-id: msg_it'\\''s' -H 'webhook-timestamp: 1'`);
  });
});
