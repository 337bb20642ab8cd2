/**
 * The body readers' deadline on a fake clock, and their letting go: a body
 * that stalls is refused with body_timeout exactly at bodyTimeoutMs, and no
 * read leaves its timer behind; a Fetch stream that errors or runs past the
 * limit is cancelled.
 */
import { Buffer } from 'node:buffer';
import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SenderGoneError } from '../../src/receive/body-limits.js';
import { readNodeBody } from '../../src/receive/read-node-body.js';
import { readWebBody } from '../../src/receive/read-web-body.js';

const LIMITS = { maxPayloadBytes: 10, bodyTimeoutMs: 500 };
const timedOut = expect.objectContaining({ code: 'body_timeout', status: 408, message: 'the body did not arrive within 500 ms' });
const tooLarge = expect.objectContaining({ code: 'payload_too_large' });

beforeEach(() => {
  vi.useFakeTimers();
});

afterEach(() => {
  vi.useRealTimers();
});

/** Whether `promise` has settled once pending callbacks ran; its outcome is observed either way. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  promise.then(
    () => (done = true),
    () => (done = true),
  );
  await vi.advanceTimersByTimeAsync(0);
  return done;
}

describe('readNodeBody', () => {
  it('refuses a body still unfinished at bodyTimeoutMs, pausing the stream', async () => {
    const request = new PassThrough();
    const body = readNodeBody(request, undefined, LIMITS);
    request.write(Buffer.from('abc'));
    await vi.advanceTimersByTimeAsync(499);
    expect(await settled(body)).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await expect(body).rejects.toThrow(timedOut);
    expect(request.isPaused()).toBe(true);
    expect(request.listenerCount('data')).toBe(0);
  });

  it.each([
    ['a body read whole', (request: PassThrough) => request.end(Buffer.from('abc'))],
    ['a body past the limit', (request: PassThrough) => request.write(Buffer.alloc(11))],
    ['a lost connection', (request: PassThrough) => request.destroy()],
  ])('leaves no timer behind after %s', async (_name, send) => {
    const request = new PassThrough();
    const body = readNodeBody(request, undefined, LIMITS);
    body.catch(() => undefined);
    send(request);
    expect(await settled(body)).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });
});

/** A Fetch stream that hands out `chunks` when read, then stalls or closes; notes whether it was cancelled. */
function webStream(chunks: Uint8Array[], then: 'stall' | 'close' | 'error') {
  const state = { cancelled: false, pulled: 0 };
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        const chunk = chunks[state.pulled++];
        if (chunk !== undefined) return controller.enqueue(chunk);
        if (then === 'close') return controller.close();
        if (then === 'error') return controller.error(new Error('connection reset'));
        return new Promise(() => undefined);
      },
      cancel() {
        state.cancelled = true;
      },
    },
    { highWaterMark: 0 },
  );
  return { stream, state };
}

describe('readWebBody', () => {
  it('refuses a body still unfinished at bodyTimeoutMs, and cancels the stream', async () => {
    const { stream, state } = webStream([Buffer.from('abc')], 'stall');
    const body = readWebBody(stream, undefined, LIMITS);
    await vi.advanceTimersByTimeAsync(499);
    expect(await settled(body)).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await expect(body).rejects.toThrow(timedOut);
    expect(state.cancelled).toBe(true);
  });

  it('rejects a stream that errors as the sender gone, and cancels it', async () => {
    const { stream } = webStream([Buffer.from('abc')], 'error');
    await expect(readWebBody(stream, undefined, LIMITS)).rejects.toBeInstanceOf(SenderGoneError);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('refuses a declared Content-Length past the limit without reading the stream', async () => {
    const { stream, state } = webStream([Buffer.from('abc')], 'close');
    await expect(readWebBody(stream, '11', LIMITS)).rejects.toThrow(tooLarge);
    expect(state.pulled).toBe(0);
  });

  it.each([
    ['a body read whole', [Buffer.from('abc')]],
    ['a body past the limit', [Buffer.alloc(11)]],
  ])('leaves no timer behind after %s', async (_name, chunks) => {
    const { stream } = webStream(chunks, 'close');
    const body = readWebBody(stream, undefined, LIMITS);
    body.catch(() => undefined);
    expect(await settled(body)).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('answers the chunks in order, as one buffer of their total length', async () => {
    const { stream } = webStream([Buffer.from('ab'), Buffer.from(''), Buffer.from('cde')], 'close');
    const body = await readWebBody(stream, '5', LIMITS);
    expect(body.byteLength).toBe(5);
    expect(Buffer.from(body).toString()).toBe('abcde');
  });
});
