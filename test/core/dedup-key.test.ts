/** The key a delivery is deduplicated under: the id scoped by the secret that verified it. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { dedupKey, dedupScope } from '../../src/core/dedup-key.js';
import { decodeSecret } from '../../src/core/secret.js';
import { keyMaterialOf, SECRET, OLD_SECRET } from '../helpers/signed-request.js';

describe('dedupScope', () => {
  it('is 16 characters of base64url derived one way from the key: the same for one key, another for another', () => {
    const scope = dedupScope(decodeSecret(SECRET));
    expect(scope).toMatch(/^[A-Za-z0-9_-]{16}$/);
    expect(scope).toBe(keyMaterialOf(SECRET).scope);
    expect(dedupScope(decodeSecret(SECRET))).toBe(scope);
    expect(dedupScope(decodeSecret(OLD_SECRET))).not.toBe(scope);
    expect(dedupScope(decodeSecret('legacy-secret'))).toBe(keyMaterialOf('legacy-secret').scope);
  });

  it('holds no part of the key, however the key is written', () => {
    const key = decodeSecret(SECRET);
    const scope = dedupScope(key);
    for (const encoding of ['base64', 'base64url', 'hex'] as const) expect(Buffer.from(key).toString(encoding)).not.toContain(scope);
  });
});

describe('dedupKey', () => {
  it('is the scope, a colon, and the id', () => {
    expect(dedupKey('AAAAAAAAAAAAAAAA', 'evt_1')).toBe('AAAAAAAAAAAAAAAA:evt_1');
  });

  it('gives no two pairs of a scope and an id the same key, whatever colons the ids hold', () => {
    const scope = fc.stringMatching(/^[A-Za-z0-9_-]{16}$/);
    fc.assert(
      fc.property(scope, fc.string(), scope, fc.string(), (scopeA, idA, scopeB, idB) => {
        fc.pre(scopeA !== scopeB || idA !== idB);
        expect(dedupKey(scopeA, idA)).not.toBe(dedupKey(scopeB, idB));
      }),
    );
    expect(dedupKey('AAAAAAAAAAAAAAAA', 'a:b')).not.toBe(dedupKey('BBBBBBBBBBBBBBBB', 'b'));
  });
});
