/**
 * The bytes and the HMAC of the runtime, on `node:buffer` and `node:crypto`:
 * the build for Node, Bun and Deno. The build for runtimes without them
 * (Vercel Edge, Cloudflare Workers) puts `runtime-crypto.web.ts`, which
 * exports the same names, in its place.
 */
import { Buffer } from 'node:buffer';
import { createHmac, timingSafeEqual } from 'node:crypto';

/** Whether `hmacSha256` answers here: where it does not, only the async verification (Web Crypto) works. */
export const SYNC_HMAC: boolean = true;

/** HMAC-SHA256 of `head` then `body` (strings as UTF-8) under `key`. */
export function hmacSha256(key: Uint8Array, head: string, body: string | Uint8Array): Uint8Array {
  return createHmac('sha256', key).update(head).update(body).digest();
}

/** Whether two digests of the same length are equal, compared in constant time. */
export function sameDigest(a: Uint8Array, b: Uint8Array): boolean {
  return timingSafeEqual(a, b);
}

/** The bytes of a view, without a copy. */
export function viewBytes(view: ArrayBufferView): Uint8Array {
  return Buffer.isBuffer(view) ? view : Buffer.from(view.buffer, view.byteOffset, view.byteLength);
}

/** The bytes of an ArrayBuffer, without a copy. */
export function bufferBytes(buffer: ArrayBuffer): Uint8Array {
  return Buffer.from(buffer);
}

/** The UTF-8 bytes of `text`. */
export function utf8Bytes(text: string): Uint8Array {
  return Buffer.from(text);
}

/** How many bytes `text` takes in UTF-8. */
export function utf8Length(text: string): number {
  return Buffer.byteLength(text);
}

/** The UTF-8 text of `bytes`. */
export function utf8Text(bytes: Uint8Array): string {
  return asBuffer(bytes).toString();
}

/**
 * Base64 (standard or URL-safe) to bytes. Characters outside base64 are
 * skipped, so malformed text decodes short rather than throwing.
 */
export function decodeBase64(text: string): Uint8Array {
  return Buffer.from(text, 'base64');
}

/** Padded standard base64. */
export function encodeBase64(bytes: Uint8Array): string {
  return asBuffer(bytes).toString('base64');
}

/** Unpadded URL-safe base64. */
export function encodeBase64url(bytes: Uint8Array): string {
  return asBuffer(bytes).toString('base64url');
}

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
