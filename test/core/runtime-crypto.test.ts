/**
 * The web build's bytes and HMAC (src/core/runtime-crypto.web.ts) give what
 * the Node build's (runtime-crypto.ts) give, and where the runtime hands out
 * no node:crypto, a synchronous HMAC is refused with a WebhookOptionsError
 * naming verifyAsync and the entries.
 */
import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import * as node from '../../src/core/runtime-crypto.js';
import * as web from '../../src/core/runtime-crypto.web.js';
import { WebhookOptionsError } from '../../src/index.js';

/** The web twin loaded afresh where `process.getBuiltinModule` is missing, as on Vercel Edge or a Worker without nodejs_compat. */
async function webWithoutNode(): Promise<typeof web> {
  vi.resetModules();
  vi.stubGlobal('process', { ...process, getBuiltinModule: undefined });
  try {
    return await import('../../src/core/runtime-crypto.web.js');
  } finally {
    vi.unstubAllGlobals();
  }
}

afterEach(() => vi.unstubAllGlobals());

const KEY = new TextEncoder().encode('a key of some bytes');

describe('the web build of runtime-crypto', () => {
  it('decodes base64 as node:buffer does: standard, URL-safe, malformed and padded text alike', () => {
    const base64ish = fc.string({ unit: fc.constantFrom(...'ABCxyz019+/-_= .*é'.split('')), maxLength: 60 });
    fc.assert(
      fc.property(base64ish, (text) => {
        expect(Buffer.from(web.decodeBase64(text))).toEqual(Buffer.from(node.decodeBase64(text)));
      }),
    );
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 80 }), (bytes) => {
        expect(Buffer.from(web.decodeBase64(Buffer.from(bytes).toString('base64')))).toEqual(Buffer.from(bytes));
      }),
    );
  });

  it('encodes base64 and base64url, and counts and reads UTF-8, as node:buffer does', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 80 }), (bytes) => {
        expect(web.encodeBase64(bytes)).toBe(node.encodeBase64(bytes));
        expect(web.encodeBase64url(bytes)).toBe(node.encodeBase64url(bytes));
        expect(web.utf8Text(bytes)).toBe(node.utf8Text(bytes));
      }),
    );
    // Any UTF-16, lone surrogates too.
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 40 }), fc.string({ maxLength: 8, unit: fc.integer({ min: 0xd7f0, max: 0xe010 }).map((unit) => String.fromCharCode(unit)) }), (text, surrogates) => {
        expect(web.utf8Length(text + surrogates)).toBe(node.utf8Length(text + surrogates));
        expect(Buffer.from(web.utf8Bytes(text))).toEqual(Buffer.from(node.utf8Bytes(text)));
      }),
      { numRuns: 50 },
    );
    // fast-check's first string of unit 'binary' costs it about 1.5 s of CPU on a 2-core machine, more under load.
  }, 30_000);

  it('compares digests as timingSafeEqual does', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), fc.nat(31), fc.integer({ min: 1, max: 255 }), (digest, at, flip) => {
        const other = Uint8Array.from(digest);
        other[at]! ^= flip;
        expect([web.sameDigest(digest, Uint8Array.from(digest)), web.sameDigest(digest, other)]).toEqual([true, false]);
      }),
    );
    expect(web.sameDigest(new Uint8Array(32), new Uint8Array(31))).toBe(false);
  });

  it('gives views of the same bytes, without a copy', () => {
    const buffer = new ArrayBuffer(8);
    const view = new DataView(buffer, 2, 4);
    expect([web.viewBytes(view).buffer, web.viewBytes(view).byteOffset, web.viewBytes(view).byteLength]).toEqual([buffer, 2, 4]);
    expect(web.bufferBytes(buffer).buffer).toBe(buffer);
  });

  it("computes node:crypto's HMAC where the runtime hands node:crypto out (Node, Workers with nodejs_compat)", () => {
    expect(web.SYNC_HMAC).toBe(true);
    expect(Buffer.from(web.hmacSha256(KEY, 'id.1.', '{"body"}'))).toEqual(Buffer.from(node.hmacSha256(KEY, 'id.1.', '{"body"}')));
  });

  it('without node:crypto, refuses a synchronous HMAC with a WebhookOptionsError naming verifyAsync and the entries', async () => {
    const bare = await webWithoutNode();
    expect(bare.SYNC_HMAC).toBe(false);
    const error = (() => {
      try {
        bare.hmacSha256(KEY, 'id.1.', 'body');
      } catch (thrown) {
        return thrown;
      }
    })();
    // Loaded afresh, its WebhookOptionsError is another copy of the class: its name and code are what a caller sees.
    expect(error).toMatchObject({ name: WebhookOptionsError.name, code: 'invalid_option' });
    expect((error as Error).message).toMatch(/verifyAsync\(\).*svc-webhooks\/fetch.*svc-webhooks\/hono/);
  });
});
