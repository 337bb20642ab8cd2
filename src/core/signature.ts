import { Buffer } from 'node:buffer';
import { createHmac, timingSafeEqual } from 'node:crypto';

// A rotation sends two entries; more than this is not from the service, and
// each tried entry costs a base64 decode and a compare per key.
export const MAX_SIGNATURES_TRIED = 8;
const DIGEST_BYTES = 32;
// "v1," and the 44 characters of a padded base64 SHA-256 digest: anything else is no signature of ours.
const ENTRY_LENGTH = 3 + 44;
const PAD = 0x3d; // "=": a 32-byte digest always ends in one
const COMMA = 0x2c;

/** HMAC-SHA256 over `id.timestamp.body` (spec section 5, rules 1 and 2). */
export function computeSignature(key: Buffer, id: string, timestamp: string, body: string | Buffer): Buffer {
  return createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest();
}

/**
 * Whether any `v1,` entry of a `webhook-signature` header equals any of the
 * expected digests. Entries are separated by a space, or by ", " where Node
 * and Fetch joined repeated header lines. Entries of other versions are
 * skipped; compares are constant-time on the decoded bytes.
 */
export function hasMatchingSignature(header: string, expected: readonly Buffer[]): boolean {
  return matchingSignature(header, expected) !== -1;
}

/** The index in `expected` of the digest that an entry of `header` equals, or -1; see `hasMatchingSignature`. */
export function matchingSignature(header: string, expected: readonly Buffer[]): number {
  let tried = 0;
  let start = 0;
  while (start < header.length && tried < MAX_SIGNATURES_TRIED) {
    let next = header.indexOf(' ', start);
    if (next === -1) next = header.length;
    // A comma before the space joined two header lines: it ends this entry, it is no part of it.
    const end = next < header.length && header.charCodeAt(next - 1) === COMMA ? next - 1 : next;
    if (end - start === ENTRY_LENGTH && header.startsWith('v1,', start) && header.charCodeAt(end - 1) === PAD) {
      tried++;
      // Buffer.from skips characters outside base64, so a malformed entry decodes short.
      const candidate = Buffer.from(header.slice(start + 3, end), 'base64');
      if (candidate.length === DIGEST_BYTES) {
        for (let i = 0; i < expected.length; i++) {
          if (timingSafeEqual(candidate, expected[i]!)) return i;
        }
      }
    }
    start = next + 1;
  }
  return -1;
}
