/**
 * The body readers at the limit: a declared Content-Length past it is
 * refused before reading, a streamed body one byte past it is refused and
 * not read further, and one at the limit is read whole.
 */
import { Buffer } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { SenderGoneError } from '../../src/receive/body-limits.js';
import { checkDeclaredLength } from '../../src/receive/declared-length.js';
import { readNodeBody } from '../../src/receive/read-node-body.js';
import { readWebBody } from '../../src/receive/read-web-body.js';

/** A 10-byte limit, with a deadline no test here reaches. */
const LIMITS = { maxPayloadBytes: 10, bodyTimeoutMs: 60_000 };

const tooLarge = expect.objectContaining({ code: 'payload_too_large', status: 413, message: 'the body is larger than 10 bytes' });

/** A stream standing in for a request: the Readable side of IncomingMessage that readNodeBody uses. */
function requestOf(headers: Record<string, string> = {}): PassThrough & IncomingMessage {
  return Object.assign(new PassThrough(), { headers }) as unknown as PassThrough & IncomingMessage;
}

const listenersOn = (stream: PassThrough) => ['data', 'end', 'error', 'close'].map((event) => stream.listenerCount(event));

/** A Fetch stream of `chunks`, noting whether it was cancelled. */
function webStream(chunks: Uint8Array[]) {
  const state = { cancelled: false, pulled: 0 };
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        const chunk = chunks[state.pulled++];
        if (chunk === undefined) controller.close();
        else controller.enqueue(chunk);
      },
      cancel() {
        state.cancelled = true;
      },
    },
    // Pulled only when read: what was pulled is what the reader asked for.
    { highWaterMark: 0 },
  );
  return { stream, state };
}

describe('checkDeclaredLength', () => {
  it('passes a length up to the limit, or none', () => {
    for (const length of [undefined, null, '', '0', '9', '10', ' 10 ', 'abc']) {
      expect(() => checkDeclaredLength(length, 10)).not.toThrow();
    }
  });

  it('refuses a length past the limit with payload_too_large', () => {
    for (const length of ['11', '1e3', '0x10', '99999999999999999999']) {
      expect(() => checkDeclaredLength(length, 10)).toThrow(tooLarge);
    }
  });
});

describe('readNodeBody', () => {
  it('reads a body of exactly the limit, chunk by chunk, then lets go of the stream', async () => {
    const request = requestOf();
    const body = readNodeBody(request, request.headers['content-length'], LIMITS);
    request.write(Buffer.from('abcd'));
    request.write(Buffer.from('efghij'));
    request.end();
    expect((await body).toString()).toBe('abcdefghij');
    expect(listenersOn(request)).toEqual([0, 0, 0, 0]);
  });

  it('reads an empty body', async () => {
    const request = requestOf();
    const body = readNodeBody(request, request.headers['content-length'], LIMITS);
    request.end();
    expect(await body).toEqual(Buffer.alloc(0));
  });

  it('refuses the chunk that passes the limit, pauses the stream and reads nothing more', async () => {
    const request = requestOf();
    const body = readNodeBody(request, request.headers['content-length'], LIMITS);
    request.write(Buffer.from('abcdef'));
    request.write(Buffer.from('ghijk'));
    await expect(body).rejects.toThrow(tooLarge);
    expect(request.isPaused()).toBe(true);
    expect(listenersOn(request)).toEqual([0, 0, 0, 0]);
    request.write(Buffer.from('more'));
    expect(request.readableLength).toBe(4);
  });

  it('refuses at once a declared Content-Length past the limit, without reading', async () => {
    const request = requestOf({ 'content-length': '11' });
    const body = readNodeBody(request, request.headers['content-length'], LIMITS);
    request.end(Buffer.alloc(11));
    await expect(body).rejects.toThrow(tooLarge);
    expect(request.readableFlowing).toBe(null);
    expect(listenersOn(request)).toEqual([0, 0, 0, 0]);
  });

  it('reads a body whose declared Content-Length is the limit', async () => {
    const request = requestOf({ 'content-length': '10' });
    const body = readNodeBody(request, request.headers['content-length'], LIMITS);
    request.end(Buffer.from('0123456789'));
    expect((await body).toString()).toBe('0123456789');
  });

  it('rejects a stream error as the sender gone, and lets go of the stream', async () => {
    const request = requestOf();
    const body = readNodeBody(request, request.headers['content-length'], LIMITS);
    request.destroy(new Error('socket hang up'));
    await expect(body).rejects.toBeInstanceOf(SenderGoneError);
    expect(listenersOn(request)).toEqual([0, 0, 0, 0]);
  });

  it('rejects when the request closes before its body ended', async () => {
    const request = requestOf();
    const body = readNodeBody(request, request.headers['content-length'], LIMITS);
    request.write(Buffer.from('abc'));
    request.destroy();
    await expect(body).rejects.toBeInstanceOf(SenderGoneError);
    expect(listenersOn(request)).toEqual([0, 0, 0, 0]);
  });
});

describe('readWebBody', () => {
  it('reads a body of exactly the limit into one ArrayBuffer', async () => {
    const { stream, state } = webStream([Buffer.from('abcd'), Buffer.from('efghij')]);
    const body = await readWebBody(stream, undefined, LIMITS);
    expect(Buffer.from(body).toString()).toBe('abcdefghij');
    expect(state.cancelled).toBe(false);
  });

  it('reads no stream as an empty body', async () => {
    expect((await readWebBody(null, undefined, LIMITS)).byteLength).toBe(0);
  });

  it('cancels the stream at the chunk that passes the limit, pulling no more', async () => {
    const { stream, state } = webStream([Buffer.from('abcdef'), Buffer.from('ghijk'), Buffer.from('lmn')]);
    await expect(readWebBody(stream, undefined, LIMITS)).rejects.toThrow(tooLarge);
    expect(state).toEqual({ cancelled: true, pulled: 2 });
  });
});
