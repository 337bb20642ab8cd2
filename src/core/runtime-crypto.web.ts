/**
 * The bytes and the HMAC of the runtime where `node:buffer` and
 * `node:crypto` may be missing (Vercel Edge, Cloudflare Workers without
 * `nodejs_compat`): the web build puts this file in the place of
 * `runtime-crypto.ts`, whose names it exports. Bytes are plain Uint8Arrays.
 * The HMAC is `node:crypto`'s where the runtime hands it out all the same
 * (`process.getBuiltinModule`, as Workers do with `nodejs_compat`); where
 * it does not, nothing verifies synchronously, and the entries verify with
 * Web Crypto (`subtle-keys.ts`).
 */
import { WebhookOptionsError } from '../base/options-error.js';

interface NodeHmac {
  update(data: string | Uint8Array): NodeHmac;
  digest(): Uint8Array;
}

interface NodeCrypto {
  createHmac(algorithm: 'sha256', key: Uint8Array): NodeHmac;
  timingSafeEqual(a: Uint8Array, b: Uint8Array): boolean;
}

const nodeCrypto = (globalThis as { process?: { getBuiltinModule?: (name: string) => unknown } }).process?.getBuiltinModule?.('node:crypto') as
  | NodeCrypto
  | undefined;

/** Whether `hmacSha256` answers here: where it does not, only the async verification (Web Crypto) works. */
export const SYNC_HMAC: boolean = nodeCrypto !== undefined;

const NO_SYNC_HMAC =
  'svc-webhooks: this runtime has no node:crypto, so nothing is signed or verified synchronously here (verify, ' +
  'verifyDelivery, sign, Webhook): verify with verifyAsync(), or receive through svc-webhooks/fetch ' +
  'or svc-webhooks/hono, which verify with Web Crypto';

/** HMAC-SHA256 of `head` then `body` (strings as UTF-8) under `key`. Throws `WebhookOptionsError` without `node:crypto`. */
export function hmacSha256(key: Uint8Array, head: string, body: string | Uint8Array): Uint8Array {
  if (nodeCrypto === undefined) throw new WebhookOptionsError(NO_SYNC_HMAC);
  return nodeCrypto.createHmac('sha256', key).update(head).update(body).digest();
}

/** Whether two digests of the same length are equal, compared in constant time: every byte is read, whatever differs. */
export function sameDigest(a: Uint8Array, b: Uint8Array): boolean {
  let difference = a.length ^ b.length;
  for (let i = 0; i < a.length; i++) difference |= a[i]! ^ (b[i] ?? 0);
  return difference === 0;
}

/** The bytes of a view, without a copy. */
export function viewBytes(view: ArrayBufferView): Uint8Array {
  return new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
}

/** The bytes of an ArrayBuffer, without a copy. */
export function bufferBytes(buffer: ArrayBuffer): Uint8Array {
  return new Uint8Array(buffer);
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The UTF-8 bytes of `text`. */
export function utf8Bytes(text: string): Uint8Array {
  return encoder.encode(text);
}

/** How many bytes `text` takes in UTF-8; a lone surrogate, encoded as U+FFFD, takes 3. */
export function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) bytes += 1;
    else if (unit < 0x800) bytes += 2;
    else if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}

/** The UTF-8 text of `bytes`. */
export function utf8Text(bytes: Uint8Array): string {
  return decoder.decode(bytes);
}

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
// Each character's 6 bits, or -1; "-" and "_" are the URL-safe 62 and 63, as node:buffer reads them.
const SEXTETS = new Int8Array(128).fill(-1);
for (let i = 0; i < 64; i++) SEXTETS[ALPHABET.charCodeAt(i)] = i;
SEXTETS[0x2d] = 62;
SEXTETS[0x5f] = 63;

/**
 * Base64 (standard or URL-safe) to bytes, read as node:buffer reads it:
 * characters outside base64 are skipped and the first "=" ends the text, so
 * malformed text decodes short rather than throwing.
 */
export function decodeBase64(text: string): Uint8Array {
  const out = new Uint8Array(Math.floor((text.length * 3) / 4));
  let length = 0;
  let bits = 0;
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit === 0x3d) break;
    const sextet = unit < 128 ? SEXTETS[unit]! : -1;
    if (sextet < 0) continue;
    bits = (bits << 6) | sextet;
    count += 6;
    if (count >= 8) {
      count -= 8;
      out[length++] = (bits >> count) & 0xff;
    }
  }
  return out.subarray(0, length);
}

/** Padded standard base64. */
export function encodeBase64(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** Unpadded URL-safe base64. */
export function encodeBase64url(bytes: Uint8Array): string {
  return encodeBase64(bytes).replace(/=+$/, '').replaceAll('+', '-').replaceAll('/', '_');
}
