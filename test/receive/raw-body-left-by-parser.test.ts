/** What a body parser that ran before left on a Node request: raw bytes first, a raw body next, or a refusal. */
import { Buffer } from 'node:buffer';
import { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { WebhookVerificationError } from '../../src/index.js';
import { rawBodyLeftByParser, type ParsedNodeRequest } from '../../src/receive/raw-body-left-by-parser.js';

/** A request as a framework hands it on: `left` set by its parsers, the stream read or not. */
function requestWith(left: { body?: unknown; rawBody?: unknown }, streamRead: boolean): ParsedNodeRequest {
  const request = Object.assign(new IncomingMessage(new Socket()), left);
  if (streamRead) {
    request.push(bytes);
    request.read();
  }
  return request;
}

const bytes = Buffer.from('{"id":"evt_1"}');

describe('rawBodyLeftByParser', () => {
  it.each([
    ['a Buffer', bytes],
    ['a Uint8Array', new Uint8Array(bytes)],
    ['a Uint8Array of another realm', runInNewContext('new Uint8Array([123, 125])')],
    ['a string', '{"id":"evt_1"}'],
  ])('answers the raw bytes kept in rawBody as %s, before a parsed body', (_kind, rawBody) => {
    expect(rawBodyLeftByParser(requestWith({ rawBody, body: { id: 'evt_1' } }, true))).toBe(rawBody);
  });

  it.each([
    ['a Buffer, as express.raw() leaves', bytes],
    ['a string, as express.text() leaves', '{"id":"evt_1"}'],
  ])('answers a body that is %s when rawBody holds nothing', (_kind, body) => {
    expect(rawBodyLeftByParser(requestWith({ rawBody: { parsed: true }, body }, true))).toBe(body);
  });

  it('answers undefined for an unread stream, even with the {} of a parser that skipped it', () => {
    expect(rawBodyLeftByParser(requestWith({}, false))).toBe(undefined);
    expect(rawBodyLeftByParser(requestWith({ body: {} }, false))).toBe(undefined);
  });

  it.each([
    ['a parsed object', { body: { id: 'evt_1' } }],
    ['an array of numbers', { body: [123, 125], rawBody: [123, 125] }],
    ['an ArrayBuffer', { body: bytes.buffer }],
  ])('refuses with body_already_parsed a read stream that left %s', (_kind, left) => {
    const refusal = (() => {
      try {
        rawBodyLeftByParser(requestWith(left, true));
      } catch (error) {
        return error;
      }
      return undefined;
    })();
    expect(refusal).toBeInstanceOf(WebhookVerificationError);
    expect(refusal).toMatchObject({ code: 'body_already_parsed', status: 500 });
    expect((refusal as Error).message).toBe(
      'a body parser consumed the request body before verifyWebhook and kept no raw bytes in req.rawBody. ' +
        'NestJS: create the app with NestFactory.create(AppModule, { rawBody: true }). ' +
        'Express: mount verifyWebhook on the webhook route before express.json() (or use express.raw({ type: "*/*" }) there), ' +
        'or keep the bytes with express.json({ verify: (req, _res, buf) => { req.rawBody = buf } })',
    );
  });
});
