/**
 * What the entries on Node's HTTP server share: the body read within its
 * limits and deadline, the raw body a parser left, and knowing when a
 * response ended (with its status) on real Node responses.
 */
import { Buffer } from 'node:buffer';
import { once } from 'node:events';
import { createServer, IncomingMessage, request as clientRequest, type ClientRequest, type ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { PassThrough } from 'node:stream';
import { runInNewContext } from 'node:vm';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { WebhookBodyError } from '../../src/index.js';
import { SenderGoneError } from '../../src/receive/body-limits.js';
import { DeadlineQueue } from '../../src/base/deadlines.js';
import { answeredOnNode, rawBodyLeftByParser, readNodeBody, statusWhenEnded, type ParsedNodeRequest } from '../../src/receive/node-platform.js';
import { closeServer, listen } from '../helpers/http-harness.js';
import { settledAfter } from '../helpers/web-stream.js';

/** What `run` throws, or `undefined` when it returns. */
function thrownBy(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  return undefined;
}

/** A 10-byte limit, read within 500 ms. */
const limits = () => ({ maxPayloadBytes: 10, deadlines: new DeadlineQueue(500) });
const tooLarge = expect.objectContaining({ code: 'payload_too_large', status: 413, message: 'the body is larger than 10 bytes' });
const timedOut = expect.objectContaining({ code: 'body_timeout', status: 408, message: 'the body did not arrive within 500 ms' });

const listenersOn = (stream: PassThrough) => ['data', 'end', 'error', 'close'].map((event) => stream.listenerCount(event));

describe('readNodeBody', () => {
  it('reads a body of exactly the limit, chunk by chunk, then lets go of the stream', async () => {
    const request = new PassThrough();
    const body = readNodeBody(request, undefined, limits());
    request.write(Buffer.from('abcd'));
    request.write(Buffer.from('efghij'));
    request.end();
    expect((await body).toString()).toBe('abcdefghij');
    expect(listenersOn(request)).toEqual([0, 0, 0, 0]);
  });

  it('answers a body that came in one chunk as that chunk, uncopied', async () => {
    const request = new PassThrough();
    const chunk = Buffer.from('abc');
    const body = readNodeBody(request, undefined, limits());
    request.end(chunk);
    expect(await body).toBe(chunk);
  });

  it('reads an empty body', async () => {
    const request = new PassThrough();
    const body = readNodeBody(request, undefined, limits());
    request.end();
    expect(await body).toEqual(Buffer.alloc(0));
  });

  it('refuses the chunk that passes the limit, pauses the stream and reads nothing more', async () => {
    const request = new PassThrough();
    const body = readNodeBody(request, undefined, limits());
    request.write(Buffer.from('abcdef'));
    request.write(Buffer.from('ghijk'));
    await expect(body).rejects.toThrow(tooLarge);
    expect(request.isPaused()).toBe(true);
    expect(listenersOn(request)).toEqual([0, 0, 0, 0]);
    request.write(Buffer.from('more'));
    expect(request.readableLength).toBe(4);
  });

  it('refuses at once a declared Content-Length past the limit, without reading', async () => {
    const request = new PassThrough();
    const body = readNodeBody(request, '11', limits());
    request.end(Buffer.alloc(11));
    await expect(body).rejects.toThrow(tooLarge);
    expect(request.readableFlowing).toBe(null);
    expect(listenersOn(request)).toEqual([0, 0, 0, 0]);
  });

  it('reads a body whose declared Content-Length is the limit', async () => {
    const request = new PassThrough();
    const body = readNodeBody(request, '10', limits());
    request.end(Buffer.from('0123456789'));
    expect((await body).toString()).toBe('0123456789');
  });

  it.each([
    ['errors', (request: PassThrough) => request.destroy(new Error('socket hang up'))],
    ['closes before its body ended', (request: PassThrough) => request.write(Buffer.from('abc')) && request.destroy()],
  ])('rejects as the sender gone a request that %s, and lets go of it', async (_name, gone) => {
    const request = new PassThrough();
    const body = readNodeBody(request, undefined, limits());
    gone(request);
    await expect(body).rejects.toBeInstanceOf(SenderGoneError);
    expect(listenersOn(request)).toEqual([0, 0, 0, 0]);
  });
});

describe('readNodeBody on a fake clock', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('refuses a body still unfinished at the deadline, pausing the stream', async () => {
    const request = new PassThrough();
    const body = readNodeBody(request, undefined, limits());
    request.write(Buffer.from('abc'));
    await vi.advanceTimersByTimeAsync(499);
    expect(await settledAfter(body, vi.advanceTimersByTimeAsync)).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await expect(body).rejects.toThrow(timedOut);
    expect(request.isPaused()).toBe(true);
    expect(request.listenerCount('data')).toBe(0);
  });

  it.each([
    ['a body read whole', (request: PassThrough) => request.end(Buffer.from('abc'))],
    ['a body past the limit', (request: PassThrough) => request.write(Buffer.alloc(11))],
    ['a lost connection', (request: PassThrough) => request.destroy()],
  ])('shares one timer among many reads that end in %s, and never fires for them', async (_name, send) => {
    const shared = limits();
    for (let i = 0; i < 100; i++) {
      const request = new PassThrough();
      const body = readNodeBody(request, undefined, shared);
      body.catch(() => undefined);
      send(request);
      expect(await settledAfter(body, vi.advanceTimersByTimeAsync)).toBe(true);
    }
    expect(vi.getTimerCount()).toBe(1);
    await vi.advanceTimersByTimeAsync(500);
    expect(vi.getTimerCount()).toBe(0);
  });
});

/** A request as a framework hands it on: `left` set by its parsers, the stream read or not, with `headers`. */
function requestWith(left: { body?: unknown; rawBody?: unknown }, streamRead: boolean, headers: Record<string, string> = {}): ParsedNodeRequest {
  const request = Object.assign(new IncomingMessage(new Socket()), left, { headers });
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

  it.each([
    ['no content-type', undefined],
    ['no charset', 'text/plain'],
    ['charset=utf-8', 'text/plain; charset=utf-8'],
    ['a quoted UTF-8', 'application/json;charset="UTF-8"'],
    ['charset=utf8', 'text/plain; charset=utf8'],
    ['charset=us-ascii', 'text/plain; charset=us-ascii'],
  ])('answers a string a text parser decoded from a body of %s, as UTF-8 gives back its bytes', (_kind, contentType) => {
    const body = '{"id":"evt_1"}';
    expect(rawBodyLeftByParser(requestWith({ body }, true, contentType === undefined ? {} : { 'content-type': contentType }))).toBe(body);
  });

  it.each([
    'text/plain; charset=utf-16le',
    'text/plain; charset=ISO-8859-1',
    'text/plain; charset="utf-16"',
    'text/plain; charset=utf-8; charset=utf-16le',
    'text/plain; charset=utf-16le; charset=utf-8',
    'text/plain; charset=cesu-8',
  ])('refuses with body_decoded a string a text parser decoded from a body of %s: the bytes signed are lost', (contentType) => {
    const refusal = thrownBy(() => rawBodyLeftByParser(requestWith({ body: '{"id":"evt_1"}' }, true, { 'content-type': contentType })));
    expect(refusal).toBeInstanceOf(WebhookBodyError);
    expect(refusal).toMatchObject({ code: 'body_decoded', status: 400 });
    expect((refusal as Error).message).toBe(
      'a text body parser decoded the request body from a charset other than UTF-8 before verifyWebhook, so the bytes that were signed are lost. ' +
        'Express: mount verifyWebhook on the webhook route before express.text() (or use express.raw({ type: "*/*" }) there), ' +
        'or keep the bytes with express.text({ verify: (req, _res, buf) => { req.rawBody = buf } })',
    );
  });

  it('answers a string in rawBody whatever the charset: the code that kept it decoded it', () => {
    expect(rawBodyLeftByParser(requestWith({ rawBody: '{"id":"evt_1"}', body: '{"id":"evt_1"}' }, true, { 'content-type': 'text/plain; charset=utf-16le' }))).toBe('{"id":"evt_1"}');
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
    const refusal = thrownBy(() => rawBodyLeftByParser(requestWith(left, true)));
    expect(refusal).toBeInstanceOf(WebhookBodyError);
    expect(refusal).toMatchObject({ code: 'body_already_parsed', status: 500 });
    expect((refusal as Error).message).toBe(
      'a body parser consumed the request body before verifyWebhook and kept no raw bytes in req.rawBody. ' +
        'NestJS: create the app with NestFactory.create(AppModule, { rawBody: true }). ' +
        'Express: mount verifyWebhook on the webhook route before express.json() (or use express.raw({ type: "*/*" }) there), ' +
        'or keep the bytes with express.json({ verify: (req, _res, buf) => { req.rawBody = buf } })',
    );
  });
});

describe('on real Node responses', () => {
  const server = createServer((_request, response) => arriving.shift()?.(response));
  const arriving: Array<(response: ServerResponse) => void> = [];
  let baseUrl: string;

  beforeAll(async () => {
    baseUrl = await listen(server);
  });

  afterAll(() => closeServer(server));

  /** A request in flight: the server's response to it, still open, and the client's side. */
  async function openResponse(): Promise<{ response: ServerResponse; client: ClientRequest }> {
    const arrived = new Promise<ServerResponse>((resolve) => arriving.push(resolve));
    const client = clientRequest(baseUrl, { agent: false });
    client.on('error', () => undefined);
    client.end();
    return { response: await arrived, client };
  }

  /** Whether `promise` has resolved by the next turn of the event loop. */
  function stateOf(promise: Promise<unknown>): Promise<'ended' | 'pending'> {
    const nextTurn = new Promise<'pending'>((resolve) => setImmediate(() => resolve('pending')));
    return Promise.race([promise.then(() => 'ended' as const), nextTurn]);
  }

  describe('statusWhenEnded', () => {
    it('waits while the route runs, and resolves with the status it ends the response with', async () => {
      const { response } = await openResponse();
      const ended = statusWhenEnded(response);
      expect(await stateOf(ended)).toBe('pending');
      response.statusCode = 202;
      response.end('done');
      expect(await ended).toBe(202);
    });

    it('resolves with the status even when the sender hung up first, so the claim is settled by the outcome', async () => {
      const { response, client } = await openResponse();
      const ended = statusWhenEnded(response);
      client.destroy();
      await once(response, 'close');
      expect(await stateOf(ended)).toBe('pending');
      response.statusCode = 500;
      response.end();
      expect(await ended).toBe(500);
    });
  });

  describe('answeredOnNode', () => {
    it("sets the refusal's headers, lets onError override them, and resolves once it ended the response", async () => {
      const { response } = await openResponse();
      let ended = false;
      const answered = answeredOnNode(response, { 'retry-after': '5', connection: 'close' }, () => {
        response.setHeader('retry-after', '60');
        setImmediate(() => {
          ended = true;
          response.end();
        });
      }).then(() => ended);
      expect(await answered).toBe(true);
      expect(response.getHeader('retry-after')).toBe('60');
      expect(response.getHeader('connection')).toBe('close');
    });

    it('resolves at once for a response that already ended, and when the connection closes unanswered', async () => {
      const first = await openResponse();
      first.response.end();
      expect(await stateOf(answeredOnNode(first.response, {}, () => undefined))).toBe('ended');
      const second = await openResponse();
      const answered = answeredOnNode(second.response, {}, () => undefined);
      expect(await stateOf(answered)).toBe('pending');
      second.response.destroy();
      expect(await stateOf(answered)).toBe('ended');
    });

    it('rejects with what onError throws', async () => {
      const { response } = await openResponse();
      await expect(
        answeredOnNode(response, {}, () => {
          throw new Error('onError broke');
        }),
      ).rejects.toThrow('onError broke');
      response.end();
    });
  });
});
