/** Which entries of webhook-signature count as a v1 signature, and that a malformed one is only refused. */
import { Buffer } from 'node:buffer';
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { computeSignature, hasMatchingSignature } from '../../src/core/signature.js';
import { sign, verify } from '../../src/index.js';
import { codeOf } from '../helpers/error-code.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const KEY = Buffer.from(SECRET.slice('whsec_'.length), 'base64');
const NOW = 1_795_000_000;
const clock = { now: () => NOW * 1000 };
const body = JSON.stringify({ id: 'evt_1', type: 'call.missed', data: { object: { id: 'call_1' } } });
const headers = sign(body, { id: 'evt_1', timestamp: NOW, secret: SECRET });
const good = headers['webhook-signature'];
/** The base64 digest of the good entry, without "v1,". */
const digest = good.slice(3);

const outcome = (signature: string) => codeOf(() => verify(body, { ...headers, 'webhook-signature': signature }, SECRET, clock));

describe('computeSignature', () => {
  it('is HMAC-SHA256 over id.timestamp.body', () => {
    const expected = createHmac('sha256', KEY).update(`evt_1.${NOW}.${body}`).digest();
    expect(computeSignature(KEY, 'evt_1', String(NOW), body)).toEqual(expected);
    expect(computeSignature(KEY, 'evt_1', String(NOW), Buffer.from(body))).toEqual(expected);
    expect(`v1,${expected.toString('base64')}`).toBe(good);
  });
});

describe('signature entries', () => {
  it('finds the good entry among others of any version, in any position', () => {
    const foreign = `v1,${Buffer.alloc(32, 7).toString('base64')}`;
    for (const signature of [good, `${foreign} ${good}`, `${good} ${foreign}`, `v2,${digest} ${good}`, `v1a,x ${good} v2,y`]) {
      expect(outcome(signature)).toBe('ok');
    }
  });

  it.each([
    ['another version', `v2,${digest}`],
    ['no version', digest],
    ['a version without its comma', `v1${digest}`],
    ['a prefix before the version', `xv1,${digest}`],
    ['a character before the entry', `,v1,${digest}`],
    ['the digest of another secret', sign(body, { id: 'evt_1', timestamp: NOW, secret: 'whsec_AAAAAAAA' })['webhook-signature']],
    ['an entry joined to the next without a space', `${good}${good}`],
    ['a comma instead of a space between entries', `v2,x,${good}`],
  ])('does not count the digest under %s', (_name, signature) => {
    expect(outcome(signature)).toBe('invalid_signature');
  });

  // Entries of the right length and padding whose base64 decodes to other than 32 bytes:
  // compared as they are, they would throw instead of being refused.
  it.each([
    ['characters outside base64', `v1,${'!'.repeat(43)}=`],
    ['a digest padded short', `v1,${'A'.repeat(42)}==`],
    ['half junk', `v1,${digest.slice(0, 20)}${'*'.repeat(23)}=`],
  ])('refuses an entry with %s as invalid_signature, never throwing', (_name, entry) => {
    expect(entry).toHaveLength(47);
    expect(outcome(entry)).toBe('invalid_signature');
    expect(outcome(`${entry} ${good}`)).toBe('ok');
  });

  it('accepts the good digest only at exactly its 44 characters', () => {
    // Buffer.from skips characters outside base64: without the length check these would decode to the digest.
    for (const entry of [`${good.slice(0, -1)}!=`, `${good.slice(0, -1)}!!=`, `v1,!${digest}`, `v1,${digest.slice(0, -1)}==`]) {
      expect(outcome(entry)).toBe('invalid_signature');
      expect(hasMatchingSignature(entry, [computeSignature(KEY, 'evt_1', String(NOW), body)])).toBe(false);
    }
  });

  it(`stops after 8 well-formed v1 entries, but skips any number of others`, () => {
    const expected = [computeSignature(KEY, 'evt_1', String(NOW), body)];
    const wrong = `v1,${Buffer.alloc(32, 1).toString('base64')}`;
    const others = Array.from({ length: 50 }, (_, i) => (i % 2 === 0 ? `v2,${digest}` : 'v1,short'));
    expect(hasMatchingSignature([...others, good].join(' '), expected)).toBe(true);
    expect(hasMatchingSignature([...Array(7).fill(wrong), good].join(' '), expected)).toBe(true);
    expect(hasMatchingSignature([...Array(8).fill(wrong), good].join(' '), expected)).toBe(false);
  });

  it('tries every expected digest: each secret of a rotation verifies on its own', () => {
    const other = Buffer.from('another-key');
    const expected = [computeSignature(other, 'evt_1', String(NOW), body), computeSignature(KEY, 'evt_1', String(NOW), body)];
    expect(hasMatchingSignature(good, expected)).toBe(true);
    expect(hasMatchingSignature(good, expected.slice(0, 1))).toBe(false);
    expect(hasMatchingSignature(good, [])).toBe(false);
    expect(hasMatchingSignature('', expected)).toBe(false);
  });

  it('handles empty entries and runs of spaces', () => {
    const expected = [computeSignature(KEY, 'evt_1', String(NOW), body)];
    expect(hasMatchingSignature(`  ${good}`, expected)).toBe(true);
    expect(hasMatchingSignature(`${good}  `, expected)).toBe(true);
    expect(hasMatchingSignature(` v1, ${good}`, expected)).toBe(true);
  });
});
