import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sign, verify, Webhook } from '../../src/index.js';
import { codeOf } from '../helpers/error-code.js';

const NOW = 1_795_000_000;
const clock = { now: () => NOW * 1000 };

const base64Secret = fc.uint8Array({ minLength: 1, maxLength: 64 }).map((key) => `whsec_${Buffer.from(key).toString('base64')}`);
const legacySecret = fc.string({ minLength: 1, maxLength: 40 }).filter((s) => !s.startsWith('whsec_'));
const secret = fc.oneof(base64Secret, legacySecret);
// Header values travel as visible ASCII without spaces.
const eventId = fc.stringMatching(/^[!-~]{1,64}$/);
const timestamp = fc.integer({ min: NOW - 300, max: NOW + 300 });
const envelope = (id: string, extra: unknown) =>
  JSON.stringify({ id, type: 'message.received', data: { object: { id: 'sms_1', extra } } });

describe('properties', () => {
  it('sign then verify round-trips any envelope, secret and id', () => {
    fc.assert(
      fc.property(secret, eventId, timestamp, fc.jsonValue(), (key, id, ts, extra) => {
        const body = envelope(id, extra);
        const event = verify(Buffer.from(body), sign(body, { id, timestamp: ts, secret: key }), key, clock);
        expect(event).toEqual(JSON.parse(body));
      }),
    );
  });

  it('a signature over arbitrary bytes always passes the signature check', () => {
    fc.assert(
      fc.property(secret, eventId, fc.uint8Array({ maxLength: 512 }), (key, id, bytes) => {
        const outcome = codeOf(() => verify(bytes, sign(bytes, { id, timestamp: NOW, secret: key }), key, clock));
        expect(['ok', 'invalid_payload']).toContain(outcome);
      }),
    );
  });

  it('any single-byte change to payload, id or timestamp is rejected', () => {
    const part = fc.constantFrom('payload', 'id', 'timestamp');
    fc.assert(
      fc.property(secret, eventId, fc.jsonValue(), part, fc.nat(), fc.integer({ min: 1, max: 255 }), (key, id, extra, which, at, delta) => {
        const body = Buffer.from(envelope(id, extra));
        const headers = sign(body, { id, timestamp: NOW, secret: key });
        const flip = (bytes: Buffer) => {
          const copy = Buffer.from(bytes);
          const i = at % copy.length;
          copy[i] = (copy[i]! + delta) % 256;
          return copy;
        };
        // Header values are strings: change one latin1 character in them.
        const flipText = (text: string) => flip(Buffer.from(text, 'latin1')).toString('latin1');
        const changed =
          which === 'payload'
            ? () => verify(flip(body), headers, key, clock)
            : which === 'id'
              ? () => verify(body, { ...headers, 'webhook-id': flipText(id) }, key, clock)
              : () => verify(body, { ...headers, 'webhook-timestamp': flipText(headers['webhook-timestamp']) }, key, clock);
        expect(codeOf(changed)).not.toBe('ok');
      }),
    );
  });

  it('the order of signature entries does not matter', () => {
    const foreign = fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => `v1,${Buffer.from(b).toString('base64')}`);
    const other = fc.oneof(foreign, fc.constant('v2,AAAA'), fc.constant('v1a,xyz'));
    fc.assert(
      fc.property(fc.array(other, { maxLength: 6 }), fc.nat(), (others, position) => {
        const body = envelope('evt_1', null);
        const headers = sign(body, { id: 'evt_1', timestamp: NOW, secret: 'legacy' });
        const entries = [...others];
        entries.splice(position % (entries.length + 1), 0, headers['webhook-signature']);
        expect(codeOf(() => verify(body, { ...headers, 'webhook-signature': entries.join(' ') }, 'legacy', clock))).toBe('ok');
      }),
    );
  });

  it('header garbage yields only WebhookVerificationError', () => {
    const value = fc.oneof(fc.string(), fc.array(fc.string()), fc.constant(undefined), fc.stringMatching(/^v1,[A-Za-z0-9+/=, ]*$/));
    const name = fc.constantFrom('webhook-id', 'webhook-timestamp', 'webhook-signature', 'Webhook-Signature', 'x', '__proto__');
    const webhook = new Webhook('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', clock);
    fc.assert(
      fc.property(fc.dictionary(name, value), fc.oneof(fc.string(), fc.uint8Array()), (headers, body) => {
        expect(codeOf(() => webhook.verify(body, headers))).not.toBe('ok');
      }),
    );
  });
});
