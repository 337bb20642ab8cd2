/** The decoded-key cache behind verify(): hits return what was decoded, and it holds at most 256 secrets. */
import { Buffer } from 'node:buffer';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { keyMaterialOf } from '../helpers/signed-request.js';

let cachedKeys: typeof import('../../src/core/key-cache.js').cachedKeys;

beforeEach(async () => {
  // A fresh module each time: the cache is module state.
  vi.resetModules();
  ({ cachedKeys } = await import('../../src/core/key-cache.js'));
});

const secretNumber = (n: number) => `whsec_${Buffer.from(`secret-${n}`).toString('base64')}`;

describe('cachedKeys', () => {
  it('decodes as decodeSecrets does', () => {
    expect(cachedKeys('whsec_QUJD')).toEqual([{ id: '0', ...keyMaterialOf('whsec_QUJD') }]);
    expect(cachedKeys(['whsec_QUJD', { id: 'old', secret: 'legacy' }])).toEqual([
      { id: '0', ...keyMaterialOf('whsec_QUJD') },
      { id: 'old', ...keyMaterialOf('legacy') },
    ]);
  });

  it('answers a secret seen before from the cache, alone or in a list', () => {
    const first = cachedKeys('whsec_QUJD');
    expect(cachedKeys('whsec_QUJD')).toBe(first);
    expect(cachedKeys(['legacy', 'whsec_QUJD'])[1]!.key).toBe(first[0]!.key);
    expect(cachedKeys([{ id: 'new', secret: 'whsec_QUJD' }])[0]!.key).toBe(first[0]!.key);
  });

  it('forgets everything when a new secret would make it hold more than 256', () => {
    const first = cachedKeys(secretNumber(0));
    for (let n = 1; n < 256; n++) cachedKeys(secretNumber(n));
    // 256 held: still a hit.
    expect(cachedKeys(secretNumber(0))).toBe(first);
    cachedKeys(secretNumber(256));
    const again = cachedKeys(secretNumber(0));
    expect(again).not.toBe(first);
    expect(again).toEqual(first);
  });

  it('holds the key of at most 256 secrets met in lists, forgetting them all for the next one', () => {
    const keyOf = (n: number) => cachedKeys([secretNumber(n)])[0]!.key;
    const first = keyOf(0);
    for (let n = 1; n < 256; n++) keyOf(n);
    expect(keyOf(0)).toBe(first);
    keyOf(256);
    const again = keyOf(0);
    expect(again).not.toBe(first);
    expect(again).toEqual(first);
  });

  it('throws TypeError as decodeSecrets does, caching nothing for it', () => {
    for (const secret of [[], '', 'whsec_', 42, null, [42]]) {
      expect(() => cachedKeys(secret as never)).toThrow(TypeError);
    }
    expect(() => cachedKeys([])).toThrow('the list of secrets is empty');
    expect(() => cachedKeys('')).toThrow('the secret is empty');
  });
});
