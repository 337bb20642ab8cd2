/**
 * What the entries on Fetch Requests share: the body read within its limits
 * and deadline (cancelling the stream past either), a body already read or
 * locked refused, a Response known by its shape, and a refusal's headers
 * added to one.
 */
import { Buffer } from 'node:buffer';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SenderGoneError } from '../../src/receive/body-limits.js';
import { DeadlineQueue } from '../../src/base/deadlines.js';
import { onErrorAnswer } from '../../src/receive/platform.js';
import { isResponse, readRequestBody, WEB_ANSWERS, webResponse } from '../../src/receive/web-platform.js';

const onErrorResponse = (answer: unknown, headers: Readonly<Record<string, string>>): Response => onErrorAnswer(WEB_ANSWERS, answer, headers, undefined);
const withMissingHeaders = (response: Response, headers: Readonly<Record<string, string>>): Response => WEB_ANSWERS.withMissingHeaders(response, headers, undefined);
import { settledAfter, streamedRequest, webStream } from '../helpers/web-stream.js';

const USED = 'hand the request over unread';
/** A 10-byte limit, read within 500 ms. */
const limits = () => ({ maxPayloadBytes: 10, deadlines: new DeadlineQueue(500) });
const tooLarge = expect.objectContaining({ code: 'payload_too_large', status: 413, message: 'the body is larger than 10 bytes' });
const timedOut = expect.objectContaining({ code: 'body_timeout', status: 408, message: 'the body did not arrive within 500 ms' });
const alreadyRead = expect.objectContaining({ code: 'body_already_parsed', status: 500, message: USED });

const read = (request: Request) => readRequestBody(request, limits(), USED);

describe('readRequestBody', () => {
  it('reads a body of exactly the limit, the chunks in order, into one buffer', async () => {
    const { stream, state } = webStream([Buffer.from('ab'), Buffer.from(''), Buffer.from('cdefghij')]);
    const body = await read(streamedRequest(stream, { 'content-length': '10' }));
    expect(Buffer.from(body).toString()).toBe('abcdefghij');
    expect(state.cancelled).toBe(false);
  });

  it('reads a body sent without a length as it streams, the chunks in order, into one buffer', async () => {
    const { stream, state } = webStream([Buffer.from('ab'), Buffer.from(''), Buffer.from('cdef'), Buffer.from('ghij')]);
    const body = await read(streamedRequest(stream));
    expect(Buffer.from(body).toString()).toBe('abcdefghij');
    expect(state.cancelled).toBe(false);
  });

  it('answers a single chunk as it is, uncopied', async () => {
    const chunk = Buffer.from('abc');
    const { stream } = webStream([chunk]);
    expect(await read(streamedRequest(stream))).toBe(chunk);
  });

  it('reads no body as an empty one', async () => {
    expect((await read(new Request('http://receiver.test/', { method: 'POST' }))).byteLength).toBe(0);
  });

  it('cancels the stream at the chunk that passes the limit, pulling no more', async () => {
    const { stream, state } = webStream([Buffer.from('abcdef'), Buffer.from('ghijk'), Buffer.from('lmn')]);
    await expect(read(streamedRequest(stream))).rejects.toThrow(tooLarge);
    expect(state).toEqual({ cancelled: true, pulled: 2 });
  });

  it('refuses a declared Content-Length past the limit without reading the stream', async () => {
    const { stream, state } = webStream([Buffer.from('abc')]);
    await expect(read(streamedRequest(stream, { 'content-length': '11' }))).rejects.toThrow(tooLarge);
    expect(state.pulled).toBe(0);
  });

  it('rejects a stream that errors as the sender gone', async () => {
    const { stream } = webStream([Buffer.from('abc')], 'error');
    await expect(read(streamedRequest(stream))).rejects.toBeInstanceOf(SenderGoneError);
  });

  it.each([
    ['without', {}],
    ['with', { 'content-length': '2' }],
  ])('refuses a body %s a declared length already read with body_already_parsed', async (_name, headers) => {
    const request = new Request('http://receiver.test/', { method: 'POST', body: '{}', headers });
    await request.text();
    await expect(read(request)).rejects.toThrow(alreadyRead);
  });

  it("reads a body of a declared length whole, the host's own way, and still refuses one that ran past the limit", async () => {
    const { stream } = webStream([Buffer.from('abc'), Buffer.from('def')]);
    const read6 = await read(streamedRequest(stream, { 'content-length': '6' }));
    expect(Buffer.from(read6).toString()).toBe('abcdef');
    // In-process, a header is only a header: the stream may run past it.
    const { stream: longer } = webStream([Buffer.from('abcdef'), Buffer.from('ghijk')]);
    await expect(read(streamedRequest(longer, { 'content-length': '5' }))).rejects.toThrow(tooLarge);
  });

  it.each([
    ['without', {}],
    ['with', { 'content-length': '3' }],
  ])('refuses a body %s a declared length whose stream a reader locked', async (_name, headers) => {
    const { stream } = webStream([Buffer.from('abc')]);
    const request = streamedRequest(stream, headers);
    request.body!.getReader();
    await expect(read(request)).rejects.toThrow(alreadyRead);
  });

  it('takes a host whose request throws from arrayBuffer() at once as the sender gone', async () => {
    const request = { headers: new Headers({ 'content-length': '2' }), arrayBuffer: () => { throw new Error('the socket closed'); } };
    await expect(read(request as unknown as Request)).rejects.toBeInstanceOf(SenderGoneError);
  });

  it('rejects a body of a declared length that broke off as the sender gone', async () => {
    const { stream } = webStream([Buffer.from('abc')], 'error');
    await expect(read(streamedRequest(stream, { 'content-length': '10' }))).rejects.toBeInstanceOf(SenderGoneError);
  });

  it('refuses a body whose stream is locked by a reader that read nothing, and leaves that reader be', async () => {
    const { stream, state } = webStream([Buffer.from('abc')]);
    const request = streamedRequest(stream);
    const reader = request.body!.getReader();
    await expect(read(request)).rejects.toThrow(alreadyRead);
    expect(state.pulled).toBe(0);
    expect(await reader.read()).toMatchObject({ done: false });
  });
});

describe('readRequestBody on a fake clock', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('refuses a body still unfinished at the deadline, and cancels the stream', async () => {
    const { stream, state } = webStream([Buffer.from('abc')], 'stall');
    const body = read(streamedRequest(stream));
    await vi.advanceTimersByTimeAsync(499);
    expect(await settledAfter(body, vi.advanceTimersByTimeAsync)).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await expect(body).rejects.toThrow(timedOut);
    expect(state.cancelled).toBe(true);
  });

  it('refuses a body of a declared length still unfinished at the deadline', async () => {
    const { stream } = webStream([Buffer.from('abc')], 'stall');
    const body = read(streamedRequest(stream, { 'content-length': '10' }));
    await vi.advanceTimersByTimeAsync(499);
    expect(await settledAfter(body, vi.advanceTimersByTimeAsync)).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await expect(body).rejects.toThrow(timedOut);
  });

  it('reads many bodies under one timer, which stops once the last deadline would have passed', async () => {
    const shared = limits();
    for (let i = 0; i < 100; i++) {
      const { stream } = webStream([Buffer.from('abc')]);
      await readRequestBody(streamedRequest(stream), shared, USED);
    }
    expect(vi.getTimerCount()).toBe(1);
    await vi.advanceTimersByTimeAsync(500);
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe('webResponse', () => {
  it('answers a body as JSON, with the headers given', async () => {
    const response = webResponse(409, { 'retry-after': '60' }, { error: { code: 'delivery_in_progress' } });
    expect(response.status).toBe(409);
    expect(Object.fromEntries(response.headers)).toEqual({ 'retry-after': '60', 'content-type': 'application/json' });
    expect(await response.json()).toEqual({ error: { code: 'delivery_in_progress' } });
  });

  it('answers no body when there is none', async () => {
    const response = webResponse(204, {}, undefined);
    expect(response.status).toBe(204);
    expect(response.body).toBe(null);
    expect([...response.headers]).toEqual([]);
  });

  it('answers no body with the headers given', () => {
    const response = webResponse(503, { 'retry-after': '5' }, undefined);
    expect([response.status, response.body, Object.fromEntries(response.headers)]).toEqual([503, null, { 'retry-after': '5' }]);
  });
});

describe('onErrorAnswer of the Web answers', () => {
  it("answers the user's Response with the refusal's headers it lacks", () => {
    const answer = onErrorResponse(new Response(null, { status: 401 }), { 'retry-after': '5' });
    expect([answer.status, answer.headers.get('retry-after')]).toEqual([401, '5']);
  });

  it.each([undefined, null, { status: 401 }, 'denied'])('throws for %j, which is no Response', (answer) => {
    expect(() => onErrorResponse(answer, {})).toThrow(new TypeError('it must answer a Response'));
  });
});

describe('isResponse', () => {
  it('knows a Response, and an object shaped like one from another realm', () => {
    expect(isResponse(new Response('x', { status: 418 }))).toBe(true);
    expect(isResponse(Response.json({ ok: true }))).toBe(true);
    expect(isResponse({ status: 200, headers: new Headers() })).toBe(true);
  });

  it.each([
    ['undefined', undefined],
    ['null', null],
    ['a number', 200],
    ['a function', Object.assign(() => undefined, { status: 200, headers: new Headers() })],
    ['an object without a status', { headers: new Headers() }],
    ['a status that is no number', { status: '200', headers: new Headers() }],
    ['an object without headers', { status: 200 }],
    ['headers that are null', { status: 200, headers: null }],
    ['headers that are a string', { status: 200, headers: 'content-type: text/plain' }],
    ['headers without has', { status: 200, headers: { 'content-type': 'text/plain' } }],
    ['headers whose has is no function', { status: 200, headers: { has: true } }],
  ])('refuses %s', (_name, value) => {
    expect(isResponse(value)).toBe(false);
  });
});

describe('withMissingHeaders of the Web answers', () => {
  it('answers the same Response when it has every header already', () => {
    const response = new Response('busy', { status: 409, headers: { 'Retry-After': '120' } });
    expect(withMissingHeaders(response, { 'retry-after': '60' })).toBe(response);
    expect(withMissingHeaders(response, {})).toBe(response);
  });

  it('adds only the headers it lacks, keeping its status, its own headers and its body', async () => {
    const response = new Response('busy', { status: 409, headers: { 'retry-after': '120', 'x-own': 'kept' } });
    const answer = withMissingHeaders(response, { 'retry-after': '60', connection: 'close' });
    expect(answer.status).toBe(409);
    expect(Object.fromEntries(answer.headers)).toEqual({
      'retry-after': '120',
      'x-own': 'kept',
      connection: 'close',
      'content-type': 'text/plain;charset=UTF-8',
    });
    expect(await answer.text()).toBe('busy');
  });

  it('adds them to a Response whose headers cannot change', () => {
    const response = Response.redirect('https://example.com/elsewhere', 307);
    expect(() => response.headers.set('retry-after', '60')).toThrow(TypeError);
    const answer = withMissingHeaders(response, { 'retry-after': '60' });
    expect(answer.status).toBe(307);
    expect(answer.headers.get('retry-after')).toBe('60');
    expect(answer.headers.get('location')).toBe('https://example.com/elsewhere');
  });
});
