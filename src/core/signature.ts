/** The `v1,` signatures of a `webhook-signature` header: computed, parsed and compared in constant time. */
import { decodeBase64, hmacSha256, sameDigest } from './runtime-crypto.js';

// A rotation sends two entries; more than this is not from the service, and
// each tried entry costs a base64 decode and a compare per key.
export const MAX_SIGNATURES_TRIED = 8;
const DIGEST_BYTES = 32;
// "v1," and the 44 characters of a padded base64 SHA-256 digest: anything else is no signature of ours.
const ENTRY_LENGTH = 3 + 44;
const PAD = 0x3d; // "=": a 32-byte digest always ends in one
const COMMA = 0x2c;

/** HMAC-SHA256 over `id.timestamp.body` (spec section 5, rules 1 and 2). */
export function computeSignature(key: Uint8Array, id: string, timestamp: string, body: string | Uint8Array): Uint8Array {
  return hmacSha256(key, `${id}.${timestamp}.`, body);
}

/**
 * Whether any `v1,` entry of a `webhook-signature` header equals any of the
 * expected digests. See `signatureCandidates` and `matchesCandidate`.
 */
export function hasMatchingSignature(header: string, expected: readonly Uint8Array[]): boolean {
  const candidates = signatureCandidates(header);
  return expected.some((digest) => matchesCandidate(candidates, digest));
}

/**
 * The digests of the well-formed `v1,` entries of a `webhook-signature`
 * header, the first `MAX_SIGNATURES_TRIED` of them: none means no secret
 * could verify the request, so nothing need be computed or looked up.
 * Entries are separated by a space, or by ", " where Node and Fetch joined
 * repeated header lines. Entries of other versions are skipped.
 */
export function signatureCandidates(header: string): Uint8Array[] {
  const candidates: Uint8Array[] = [];
  let tried = 0;
  let start = 0;
  // At start === header.length the entry would be empty, and no empty entry is read: `<=` would answer the same.
  // Stryker disable next-line EqualityOperator
  while (start < header.length && tried < MAX_SIGNATURES_TRIED) {
    let next = header.indexOf(' ', start);
    if (next === -1) next = header.length;
    // A comma before the space joined two header lines: it ends this entry, it is no part of it.
    const end = next < header.length && header.charCodeAt(next - 1) === COMMA ? next - 1 : next;
    if (end - start === ENTRY_LENGTH && header.startsWith('v1,', start) && header.charCodeAt(end - 1) === PAD) {
      tried++;
      // decodeBase64 skips characters outside base64, so a malformed entry decodes short.
      const candidate = decodeBase64(header.slice(start + 3, end));
      if (candidate.length === DIGEST_BYTES) candidates.push(candidate);
    }
    start = next + 1;
  }
  return candidates;
}

/** Whether some candidate equals `digest`. Compares are constant-time. */
export function matchesCandidate(candidates: readonly Uint8Array[], digest: Uint8Array): boolean {
  for (const candidate of candidates) {
    if (sameDigest(candidate, digest)) return true;
  }
  return false;
}
