/**
 * The key an event is deduplicated under: the event id, scoped by the secret
 * that verified it. The signature proves which secret signed a request and
 * nothing else of where it arrived: not the path, nor the tenant named in
 * it. So a delivery replayed to another path, or to another tenant name
 * that resolves to the same secret, has the same key and runs once, while
 * the same event id signed for two endpoints (two secrets) runs once for each.
 */
import { encodeBase64url, hmacSha256 } from './runtime-crypto.js';

/** What the scope is derived from besides the key: a fixed label, so the scope is no signature of anything sent. */
export const SCOPE_LABEL = 'svc-webhooks dedup scope v1';
/** 12 bytes: 16 base64url characters, enough that no two secrets of a store meet. */
const SCOPE_BYTES = 12;

/**
 * The scope of a secret's key: 16 characters of base64url (`A–Z a–z 0–9 - _`),
 * derived one way from the key, so it names the secret without revealing it.
 */
export function dedupScope(key: Uint8Array): string {
  return scopeOfDigest(hmacSha256(key, SCOPE_LABEL, ''));
}

/** The scope, from the HMAC-SHA256 of `SCOPE_LABEL` under the key however it was computed. */
export function scopeOfDigest(digest: Uint8Array): string {
  return encodeBase64url(digest.subarray(0, SCOPE_BYTES));
}

/**
 * `<scope>:<id>`. A scope has a fixed length and no `:`, so the first 16
 * characters name the secret and the rest is the id: no two pairs share a key.
 */
export function dedupKey(scope: string, id: string): string {
  return `${scope}:${id}`;
}
