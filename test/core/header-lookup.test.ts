/** readHeader over the header shapes receivers hold, and how verify() reads repeated headers. */
import { describe, expect, it } from 'vitest';
import { readHeader } from '../../src/core/headers.js';
import { sign, verify, verifyDelivery } from '../../src/index.js';
import { codeOf } from '../helpers/error-code.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const NOW = 1_795_000_000;
const clock = { now: () => NOW * 1000 };
const envelope = (id: string) => JSON.stringify({ id, type: 'call.missed', data: { object: { id: 'call_1' } } });

describe('readHeader', () => {
  it('reads a Fetch Headers, a getter or a record', () => {
    expect(readHeader(new Headers({ 'Webhook-Id': 'a' }), 'webhook-id', ', ')).toBe('a');
    expect(readHeader({ get: (name: string) => (name === 'webhook-id' ? 'b' : null) }, 'webhook-id', ', ')).toBe('b');
    expect(readHeader({ 'webhook-id': 'c' }, 'webhook-id', ', ')).toBe('c');
  });

  it('finds a record key in any case, preferring the exact lower-case key', () => {
    expect(readHeader({ 'WEBHOOK-ID': 'upper' }, 'webhook-id', ', ')).toBe('upper');
    expect(readHeader({ 'Webhook-Id': 'mixed', 'webhook-id': 'lower' }, 'webhook-id', ', ')).toBe('lower');
    expect(readHeader({ 'webhook-ids': 'longer', 'webhook-i': 'shorter' }, 'webhook-id', ', ')).toBe(undefined);
    expect(readHeader({ 'webhook-idx': 'x', 'X-WEBHOOK-ID': 'y' }, 'webhook-id', ', ')).toBe(undefined);
  });

  it('joins repeated values with the separator given', () => {
    expect(readHeader({ 'webhook-signature': ['v1,a', 'v1,b'] }, 'webhook-signature', ' ')).toBe('v1,a v1,b');
    expect(readHeader({ 'Webhook-Id': ['a', 'b'] }, 'webhook-id', ', ')).toBe('a, b');
  });

  it('answers undefined for an absent, empty or non-string value', () => {
    for (const headers of [{}, { 'webhook-id': '' }, { 'webhook-id': [] }, { 'webhook-id': undefined }, { 'webhook-id': 5 }, new Headers()]) {
      expect(readHeader(headers as never, 'webhook-id', ', ')).toBe(undefined);
    }
    expect(readHeader({ get: () => null }, 'webhook-id', ', ')).toBe(undefined);
    expect(readHeader({ get: () => '' }, 'webhook-id', ', ')).toBe(undefined);
  });

  it('answers undefined for headers that are not an object', () => {
    for (const headers of [null, undefined, 'webhook-id: a', 42]) {
      expect(readHeader(headers as never, 'webhook-id', ', ')).toBe(undefined);
    }
  });

  it('reads a record whose get is not a function as a record', () => {
    expect(readHeader({ get: 'x', 'webhook-id': 'd' } as never, 'webhook-id', ', ')).toBe('d');
  });
});

describe('verify() with unusual headers', () => {
  it('refuses each empty header as missing, naming it', () => {
    const body = envelope('evt_1');
    const headers = sign(body, { id: 'evt_1', timestamp: NOW, secret: SECRET });
    for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const) {
      const run = () => verify(body, { ...headers, [name]: '' }, SECRET, clock);
      expect(codeOf(run)).toBe('missing_header');
      expect(run).toThrow(`the ${name} header is missing or empty`);
    }
  });

  it('verifies a repeated webhook-id as its values joined with ", "', () => {
    const body = envelope('a, b');
    const headers = sign(body, { id: 'a, b', timestamp: NOW, secret: SECRET });
    expect(verifyDelivery(body, { ...headers, 'webhook-id': ['a', 'b'] }, SECRET, clock).id).toBe('a, b');
  });

  it('refuses a repeated webhook-timestamp, even one whose parts would join into a number', () => {
    const body = envelope('evt_1');
    const headers = sign(body, { id: 'evt_1', timestamp: NOW, secret: SECRET });
    const stamp = String(NOW);
    for (const repeated of [[stamp, stamp], [stamp.slice(0, 5), stamp.slice(5)]]) {
      expect(codeOf(() => verify(body, { ...headers, 'webhook-timestamp': repeated }, SECRET, clock))).toBe('invalid_timestamp');
    }
  });
});
