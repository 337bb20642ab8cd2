/** What sign() accepts and produces, at the edges of its options. */
import { Buffer } from 'node:buffer';
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { sign, Webhook } from '../../src/index.js';
import { WebhookOptionsError } from '../../src/base/options-error.js';

const SECRET = 'whsec_QUJD';
const digestOf = (key: string, signed: string) => createHmac('sha256', key).update(signed).digest('base64');

describe('sign()', () => {
  it('produces the three headers, each entry HMAC-SHA256 of id.timestamp.body under its secret', () => {
    expect(sign('{}', { id: 'evt_1', timestamp: 1_795_000_000, secret: [SECRET, 'legacy'] })).toEqual({
      'webhook-id': 'evt_1',
      'webhook-timestamp': '1795000000',
      'webhook-signature': `v1,${digestOf('ABC', 'evt_1.1795000000.{}')} v1,${digestOf('legacy', 'evt_1.1795000000.{}')}`,
    });
  });

  it('signs the bytes of a Uint8Array or an ArrayBuffer as they are', () => {
    const bytes = Buffer.from([0xc3, 0x28, 0x7b]);
    const expected = createHmac('sha256', 'ABC').update(Buffer.concat([Buffer.from('evt_1.7.'), bytes])).digest('base64');
    const arrayBuffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length);
    for (const payload of [bytes, new Uint8Array(bytes), arrayBuffer]) {
      expect(sign(payload, { id: 'evt_1', timestamp: 7, secret: SECRET })['webhook-signature']).toBe(`v1,${expected}`);
    }
  });

  it('takes second 0 and rounds a Date down to whole seconds', () => {
    expect(sign('{}', { id: 'evt_1', timestamp: 0, secret: SECRET })['webhook-timestamp']).toBe('0');
    expect(sign('{}', { id: 'evt_1', timestamp: new Date(999), secret: SECRET })['webhook-timestamp']).toBe('0');
    expect(sign('{}', { id: 'evt_1', timestamp: new Date(7_999), secret: SECRET })['webhook-timestamp']).toBe('7');
  });

  it('signs a body of any size: it has no payload limit', () => {
    const webhook = new Webhook(SECRET, { maxPayloadBytes: 1 });
    expect(webhook.sign('x'.repeat(100), { id: 'evt_1', timestamp: 1 })['webhook-signature']).toMatch(/^v1,/);
  });

  it.each([
    ['a numeric id', { id: 1, timestamp: 1 }, 'id must be a non-empty string'],
    ['no id', { timestamp: 1 }, 'id must be a non-empty string'],
    ['a negative timestamp', { id: 'evt_1', timestamp: -1 }, 'timestamp must be whole seconds >= 0 or a valid Date'],
    ['a Date before 1970', { id: 'evt_1', timestamp: new Date(-1000) }, 'timestamp must be whole seconds >= 0 or a valid Date'],
    ['a timestamp as a string', { id: 'evt_1', timestamp: '1795000000' }, 'timestamp must be whole seconds >= 0 or a valid Date'],
    ['an unsafe timestamp', { id: 'evt_1', timestamp: 2 ** 53 }, 'timestamp must be whole seconds >= 0 or a valid Date'],
  ])('refuses %s, saying what it needs', (_name, options, says) => {
    expect(() => sign('{}', { ...(options as object), secret: SECRET } as never)).toThrow(new WebhookOptionsError(`svc-webhooks: ${says}`));
    expect(() => new Webhook(SECRET).sign('{}', options as never)).toThrow(new WebhookOptionsError(`svc-webhooks: ${says}`));
  });

  it.each([null, undefined, 'evt_1'])('refuses %s as options', (options) => {
    expect(() => sign('{}', options as never)).toThrow(new WebhookOptionsError('svc-webhooks: sign() needs an options object'));
    expect(() => new Webhook(SECRET).sign('{}', options as never)).toThrow(new WebhookOptionsError('svc-webhooks: sign() needs an options object'));
  });
});
