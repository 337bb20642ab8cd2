/** How secrets become keys: base64 after whsec_ (strictly), UTF-8 otherwise, and lists of them. */
import { Buffer } from 'node:buffer';
import { describe, expect, it } from 'vitest';
import { decodeSecret, decodeSecrets } from '../../src/core/secret.js';
import { keyMaterialOf } from '../helpers/signed-request.js';
import { WebhookOptionsError } from '../../src/base/options-error.js';

describe('decodeSecret', () => {
  it.each([
    ['four characters', 'whsec_QUJD', 'ABC'],
    ['eight characters', 'whsec_QUJDREVG', 'ABCDEF'],
    ['three characters with their padding', 'whsec_QUI=', 'AB'],
    ['three characters without padding', 'whsec_QUI', 'AB'],
    ['two characters with their padding', 'whsec_QQ==', 'A'],
    ['two characters without padding', 'whsec_QQ', 'A'],
    ['a group, then a padded tail', 'whsec_QUJDQQ==', 'ABCA'],
    ['digits, + and /', 'whsec_+/8w', Buffer.from([0xfb, 0xff, 0x30]).toString('latin1')],
  ])('decodes base64 after whsec_: %s', (_name, secret, bytes) => {
    expect(decodeSecret(secret)).toEqual(Buffer.from(bytes, 'latin1'));
  });

  it.each([
    ['nothing after the prefix', 'whsec_'],
    ['one character', 'whsec_Q'],
    ['five characters', 'whsec_QUJDQ'],
    ['a character outside base64', 'whsec_QU*D'],
    ['a character outside base64 at the end', 'whsec_QUJD!'],
    ['a character outside base64 at the start', 'whsec_!QUJD'],
    ['a space', 'whsec_QU JD'],
    ['the URL-safe alphabet', 'whsec_-_8w'],
    ['padding in the middle', 'whsec_QQ==QUJD'],
    ['too much padding', 'whsec_QQ==='],
    ['padding alone', 'whsec_===='],
    ['one padding character after two', 'whsec_QQ='],
    ['two padding characters after three', 'whsec_QUI=='],
  ])('refuses whsec_ followed by %s', (_name, secret) => {
    expect(() => decodeSecret(secret)).toThrow(TypeError);
    expect(() => decodeSecret(secret)).toThrow('a secret starting with "whsec_" must continue with non-empty base64');
  });

  it('reads a secret without the prefix as its UTF-8 bytes', () => {
    expect(decodeSecret('QUJD')).toEqual(Buffer.from('QUJD'));
    expect(decodeSecret('clé')).toEqual(Buffer.from('clé', 'utf8'));
    expect(decodeSecret('Whsec_QUJD')).toEqual(Buffer.from('Whsec_QUJD'));
    expect(decodeSecret(' whsec_QUJD')).toEqual(Buffer.from(' whsec_QUJD'));
  });

  it('refuses an empty secret and anything but a string', () => {
    expect(() => decodeSecret('')).toThrow(new WebhookOptionsError('svc-webhooks: the secret is empty'));
    for (const secret of [undefined, null, 42, Buffer.from('key'), ['whsec_QUJD']]) {
      expect(() => decodeSecret(secret as never)).toThrow(new WebhookOptionsError('svc-webhooks: a secret must be a string'));
    }
  });
});

describe('decodeSecrets', () => {
  it('decodes one secret or each of a list, in order, each named by its position', () => {
    expect(decodeSecrets('whsec_QUJD')).toEqual([{ id: '0', ...keyMaterialOf('whsec_QUJD') }]);
    expect(decodeSecrets(['whsec_QUJD', 'legacy'])).toEqual([
      { id: '0', ...keyMaterialOf('whsec_QUJD') },
      { id: '1', ...keyMaterialOf('legacy') },
    ]);
  });

  it('names a keyed secret by its own id, alone or in a list beside plain ones', () => {
    expect(decodeSecrets({ id: 'new', secret: 'whsec_QUJD' })).toEqual([{ id: 'new', ...keyMaterialOf('whsec_QUJD') }]);
    expect(decodeSecrets([{ id: 'new', secret: 'whsec_QUJD' }, 'legacy'])).toEqual([
      { id: 'new', ...keyMaterialOf('whsec_QUJD') },
      { id: '1', ...keyMaterialOf('legacy') },
    ]);
  });

  it.each([
    ['an empty id', [{ id: '', secret: 'whsec_QUJD' }], 'svc-webhooks: a keyed secret needs an id, a non-empty string'],
    ['an id that is no string', [{ id: 7, secret: 'whsec_QUJD' }], 'svc-webhooks: a keyed secret needs an id, a non-empty string'],
    ['an id with a lone high surrogate', [{ id: 'k\ud800', secret: 'whsec_QUJD' }], "svc-webhooks: a keyed secret's id must be well-formed UTF-16 (it holds a lone surrogate)"],
    ['an id with a lone low surrogate', [{ id: '\udc00k', secret: 'whsec_QUJD' }], "svc-webhooks: a keyed secret's id must be well-formed UTF-16 (it holds a lone surrogate)"],
    ['a keyed secret that is no string', [{ id: 'a', secret: 42 }], 'svc-webhooks: a secret must be a string'],
    ['two entries with one id', [{ id: '1', secret: 'whsec_QUJD' }, 'legacy'], 'svc-webhooks: two secrets in the list have the same id'],
    ['an entry that is neither', ['whsec_QUJD', 42], 'svc-webhooks: a secret must be a string or { id, secret }'],
  ])('refuses %s with the whole message', (_name, secret, message) => {
    expect(() => decodeSecrets(secret as never)).toThrow(new WebhookOptionsError(message));
  });

  it('refuses an empty list, a list with a bad secret, and what is neither', () => {
    expect(() => decodeSecrets([])).toThrow(new WebhookOptionsError('svc-webhooks: the list of secrets is empty'));
    expect(() => decodeSecrets(['whsec_QUJD', ''])).toThrow('the secret is empty');
    for (const secret of [undefined, null, 42, { 0: 'whsec_QUJD', length: 1 }]) {
      expect(() => decodeSecrets(secret as never)).toThrow(new WebhookOptionsError('svc-webhooks: the secret must be a string, { id, secret }, or an array of them'));
    }
  });
});
