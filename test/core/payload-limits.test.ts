/** maxPayloadBytes at its boundary, for each body type, and its default of 1 MiB. */
import { Buffer } from 'node:buffer';
import { describe, expect, it } from 'vitest';
import { rawPayload } from '../../src/core/payload.js';
import { sign, verify, WebhookBodyError } from '../../src/index.js';
import { codeOf } from '../helpers/error-code.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const NOW = 1_795_000_000;

/** A signed envelope of exactly `bytes` UTF-8 bytes, padded with `fill` (1 or 2 bytes per character). */
function envelopeOf(bytes: number, fill = 'x') {
  const bare = JSON.stringify({ id: 'evt_1', type: 'call.missed', data: { object: { id: 'call_1' } }, pad: '' });
  const room = bytes - Buffer.byteLength(bare);
  const perChar = Buffer.byteLength(fill);
  const pad = fill.repeat(Math.floor(room / perChar)) + 'x'.repeat(room % perChar);
  const body = bare.replace('"pad":""', `"pad":"${pad}"`);
  expect(Buffer.byteLength(body)).toBe(bytes);
  return { body, headers: sign(body, { id: 'evt_1', timestamp: NOW, secret: SECRET }) };
}

/** The same bytes as each body type verify() takes. */
function asEachType(body: string): Array<[string, string | Uint8Array | ArrayBuffer]> {
  const bytes = Buffer.from(body);
  const view = new Uint8Array(bytes.length + 8);
  view.set(bytes, 4);
  return [
    ['string', body],
    ['Buffer', bytes],
    ['Uint8Array view', view.subarray(4, 4 + bytes.length)],
    ['ArrayBuffer', bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength)],
  ];
}

describe('maxPayloadBytes', () => {
  it.each([
    ['ASCII', 'x'],
    ['two-byte characters', 'é'],
    ['three-byte characters', '€'],
  ])('accepts a body of exactly the limit and refuses one byte more, in %s', (_name, fill) => {
    const limit = 600;
    for (const size of [limit, limit + 1]) {
      const { body, headers } = envelopeOf(size, fill);
      for (const [type, payload] of asEachType(body)) {
        const expected = size > limit ? 'payload_too_large' : 'ok';
        expect([type, codeOf(() => verify(payload, headers, SECRET, { now: () => NOW * 1000, maxPayloadBytes: limit }))]).toEqual([type, expected]);
      }
    }
  });

  it('accepts a string of fewer characters than the limit but more than a third of it', () => {
    // ASCII: as many bytes as characters, however close to the limit.
    const { body, headers } = envelopeOf(500);
    expect(verify(body, headers, SECRET, { now: () => NOW * 1000, maxPayloadBytes: 501 }).id).toBe('evt_1');
  });

  it('defaults to 1 MiB', () => {
    for (const [size, expected] of [
      [1024 * 1024, 'ok'],
      [1024 * 1024 + 1, 'payload_too_large'],
    ] as const) {
      const { body, headers } = envelopeOf(size);
      expect(codeOf(() => verify(Buffer.from(body), headers, SECRET, { now: () => NOW * 1000 }))).toBe(expected);
      expect(codeOf(() => verify(body, headers, SECRET, { now: () => NOW * 1000 }))).toBe(expected);
    }
  });

  it('is checked before the headers: a body past it is refused even unsigned', () => {
    expect(codeOf(() => verify('x'.repeat(11), {}, SECRET, { maxPayloadBytes: 10 }))).toBe('payload_too_large');
  });

  it('says the limit in the refusal, and answers 413', () => {
    try {
      rawPayload(Buffer.alloc(11), 10);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(WebhookBodyError);
      expect(error).toMatchObject({ code: 'payload_too_large', status: 413, message: 'the body is larger than 10 bytes' });
    }
  });
});

describe('rawPayload', () => {
  it('returns a string as it is and bytes without copying them', () => {
    expect(rawPayload('abc', 3)).toBe('abc');
    const bytes = Buffer.from('abc');
    expect(rawPayload(bytes, 3)).toBe(bytes);
    const backing = new Uint8Array([9, 1, 2, 3, 9]);
    const view = rawPayload(backing.subarray(1, 4), 3) as Buffer;
    expect([...view]).toEqual([1, 2, 3]);
    expect(view.buffer).toBe(backing.buffer);
    expect([...(rawPayload(backing.buffer, 5) as Buffer)]).toEqual([9, 1, 2, 3, 9]);
  });

  it('takes an ArrayBuffer or a typed array from another realm', async () => {
    const { runInNewContext } = await import('node:vm');
    const foreign = runInNewContext('({ buffer: new Uint8Array([1, 2]).buffer, view: new Uint8Array([3, 4, 5]).subarray(1) })') as {
      buffer: ArrayBuffer;
      view: Uint8Array;
    };
    expect(foreign.buffer instanceof ArrayBuffer).toBe(false);
    expect([...(rawPayload(foreign.buffer, 2) as Buffer)]).toEqual([1, 2]);
    expect([...(rawPayload(foreign.view, 2) as Buffer)]).toEqual([4, 5]);
  });

  it.each([
    ['an object', { id: 'evt_1' }, 'an object (Object)'],
    ['an array', [1, 2], 'an object (Array)'],
    ['null', null, 'null'],
    ['undefined', undefined, 'undefined'],
    ['a number', 42, 'number'],
    ['a Map', new Map(), 'an object (Map)'],
  ])('refuses %s with a TypeError naming what it got', (_name, payload, described) => {
    expect(() => rawPayload(payload as never, 100)).toThrow(TypeError);
    expect(() => rawPayload(payload as never, 100)).toThrow(`the raw body (string, Uint8Array or ArrayBuffer), not ${described}; verify before`);
  });
});
