/**
 * Secrets' keys imported into Web Crypto (`crypto.subtle`), each once, and
 * the HMAC-SHA256 of a signed request with them: the verification where the
 * runtime has no `node:crypto` (Vercel Edge, Cloudflare Workers without
 * `nodejs_compat`).
 */
import { SCOPE_LABEL, scopeOfDigest } from './dedup-key.js';
import { utf8Bytes } from './runtime-crypto.js';

/** Web Crypto's key, named by what makes one: the global type is the DOM library's, which this build has not. */
type CryptoKey = Awaited<ReturnType<typeof crypto.subtle.importKey>>;

/** A secret's key as Web Crypto holds it, and the dedup scope it gives (see `dedupScope`). */
export interface SubtleKey {
  readonly hmac: CryptoKey;
  readonly scope: string;
}

// By the decoded key's bytes, which the key cache keeps one of per secret: imported once, then shared by every
// request. Weak, so a key dropped from that cache (or a Webhook's, when it goes) is not kept here.
const imported = new WeakMap<Uint8Array, Promise<SubtleKey>>();

/** The Web Crypto key of `key`'s bytes, imported at the first call and then reused. */
export function subtleKeyOf(key: Uint8Array): Promise<SubtleKey> {
  let subtleKey = imported.get(key);
  if (subtleKey === undefined) {
    subtleKey = importKey(key);
    imported.set(key, subtleKey);
    // A failed import is tried again by the next request rather than remembered.
    subtleKey.catch(() => imported.delete(key));
  }
  return subtleKey;
}

async function importKey(key: Uint8Array): Promise<SubtleKey> {
  const hmac = await crypto.subtle.importKey('raw', key, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const scope = scopeOfDigest(new Uint8Array(await crypto.subtle.sign('HMAC', hmac, utf8Bytes(SCOPE_LABEL))));
  return { hmac, scope };
}

/** What is signed: `id.timestamp.body`, as bytes (spec section 5, rule 1). */
export function signedContent(id: string, timestamp: string, body: string | Uint8Array): Uint8Array {
  if (typeof body === 'string') return utf8Bytes(`${id}.${timestamp}.${body}`);
  const head = utf8Bytes(`${id}.${timestamp}.`);
  const content = new Uint8Array(head.byteLength + body.byteLength);
  content.set(head);
  content.set(body, head.byteLength);
  return content;
}

/** HMAC-SHA256 of `content` under `key`. */
export async function subtleSignature(key: SubtleKey, content: Uint8Array): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.sign('HMAC', key.hmac, content));
}
