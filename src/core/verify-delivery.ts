import type { Buffer } from 'node:buffer';
import { WebhookVerificationError } from './errors.js';
import { parseEvent, type WebhookEvent } from './event.js';
import { readHeader, type WebhookHeaders } from './headers.js';
import type { ResolvedVerifyOptions } from './options.js';
import { rawPayload, type WebhookPayload } from './payload.js';
import type { DecodedKey } from './secret.js';
import { computeSignature, matchingSignature, signatureCandidates } from './signature.js';
import { checkTimestamp } from './timestamp.js';

/** A delivery whose signature, timestamp and envelope were all checked. */
export interface VerifiedDelivery<E extends WebhookEvent = WebhookEvent> {
  /** The `webhook-id` header: the key to deduplicate on (spec section 5, rule 6). */
  readonly id: string;
  /** The `webhook-timestamp` header, in seconds since the Unix epoch. */
  readonly timestamp: number;
  /** Which secret verified it: the `id` of a keyed secret, else its position in the list (`'0'` for a lone one). */
  readonly keyId: string;
  /** The parsed envelope; `event.id === id`. */
  readonly event: E;
  /** The tenant whose secret verified it, where secrets are looked up per tenant; absent otherwise. */
  readonly tenant?: string;
}

/** A request that passed every check a secret is not needed for; only its signature is left to check. */
export interface SignedRequest {
  readonly body: string | Buffer;
  readonly id: string;
  readonly timestampHeader: string;
  readonly timestamp: number;
  /** The well-formed `v1` digests of `webhook-signature`: never empty. */
  readonly candidates: readonly Buffer[];
}

/**
 * The checks that need no secret, cheapest first: the body's size, the three
 * headers, the timestamp against the clock, and a well-formed `v1` entry in
 * `webhook-signature`. A request that fails them costs no HMAC and no
 * secret lookup. Throws `WebhookVerificationError`.
 */
export function readSignedRequest(payload: WebhookPayload, headers: WebhookHeaders, options: ResolvedVerifyOptions): SignedRequest {
  const body = rawPayload(payload, options.maxPayloadBytes);
  const id = readHeader(headers, 'webhook-id', ', ');
  const timestampHeader = readHeader(headers, 'webhook-timestamp', ', ');
  const signatureHeader = readHeader(headers, 'webhook-signature', ' ');
  if (id === undefined) throw missing('webhook-id');
  if (timestampHeader === undefined) throw missing('webhook-timestamp');
  if (signatureHeader === undefined) throw missing('webhook-signature');

  const timestamp = checkTimestamp(timestampHeader, options.now(), options.toleranceSeconds);
  const candidates = signatureCandidates(signatureHeader);
  if (candidates.length === 0) throw noMatch();
  return { body, id, timestampHeader, timestamp, candidates };
}

/** The signature check on `keys`, then the envelope. Throws `WebhookVerificationError`. */
export function matchSignedRequest(request: SignedRequest, keys: readonly DecodedKey[]): VerifiedDelivery {
  const { body, id, timestampHeader, timestamp, candidates } = request;
  const expected = keys.map(({ key }) => computeSignature(key, id, timestampHeader, body));
  const matched = matchingSignature(candidates, expected);
  if (matched === -1) throw noMatch();
  return { id, timestamp, keyId: keys[matched]!.id, event: parseEvent(body, id) };
}

/** The whole check, on keys already decoded. */
export function verifyWithKeys(
  payload: WebhookPayload,
  headers: WebhookHeaders,
  keys: readonly DecodedKey[],
  options: ResolvedVerifyOptions,
): VerifiedDelivery {
  return matchSignedRequest(readSignedRequest(payload, headers, options), keys);
}

function missing(name: string): WebhookVerificationError {
  return new WebhookVerificationError('missing_header', `the ${name} header is missing or empty`);
}

function noMatch(): WebhookVerificationError {
  return new WebhookVerificationError('invalid_signature', 'no v1 signature in webhook-signature matches the secret');
}
