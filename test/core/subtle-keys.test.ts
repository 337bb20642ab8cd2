/** Secrets' keys in Web Crypto: imported once per key, a failed import tried again, and what is signed. */
import { createHmac } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { dedupScope } from '../../src/core/dedup-key.js';
import { signedContent, subtleKeyOf, subtleSignature } from '../../src/core/subtle-keys.js';

const importKey = vi.spyOn(crypto.subtle, 'importKey');
afterEach(() => importKey.mockClear());

describe('subtleKeyOf', () => {
  it("imports a key's bytes once, gives the dedup scope node:crypto gives, and signs as node:crypto does", async () => {
    const key = new TextEncoder().encode('one key of its own');
    const [first, again] = await Promise.all([subtleKeyOf(key), subtleKeyOf(key)]);
    expect(again).toBe(first);
    expect((await subtleKeyOf(key)).scope).toBe(dedupScope(key));
    expect(importKey).toHaveBeenCalledTimes(1);
    const content = signedContent('evt_1', '1700000000', '{"a":1}');
    expect(Buffer.from(await subtleSignature(first, content))).toEqual(createHmac('sha256', key).update('evt_1.1700000000.{"a":1}').digest());
    await subtleKeyOf(new TextEncoder().encode('another key'));
    expect(importKey).toHaveBeenCalledTimes(2);
  });

  it('does not remember a failed import: the next call imports again', async () => {
    const key = new TextEncoder().encode('a key whose first import fails');
    importKey.mockRejectedValueOnce(new Error('import failed'));
    await expect(subtleKeyOf(key)).rejects.toThrow('import failed');
    expect((await subtleKeyOf(key)).scope).toBe(dedupScope(key));
    expect(importKey).toHaveBeenCalledTimes(2);
  });
});

describe('signedContent', () => {
  it('is the bytes of `id.timestamp.body`, for a body of text or of bytes', () => {
    const text = '{"text":"hé ✓"}';
    const expected = Buffer.from(`evt_1.1700000000.${text}`);
    expect(Buffer.from(signedContent('evt_1', '1700000000', text))).toEqual(expected);
    const padded = new Uint8Array(Buffer.from(`xx${text}yy`));
    expect(Buffer.from(signedContent('evt_1', '1700000000', padded.subarray(2, padded.length - 2)))).toEqual(expected);
  });
});
