import { WebhookVerificationError } from './errors.js';
import { parseEvent, type WebhookEvent } from './event.js';
import { readHeader, type WebhookHeaders } from './headers.js';
import type { ResolvedVerifyOptions } from './options.js';
import { rawPayload, type WebhookPayload } from './payload.js';
import type { DecodedKey } from './secret.js';
import { computeSignature, matchingSignature } from './signature.js';
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
}

/** The whole check, on keys already decoded. Order: cheapest refusal first. */
export function verifyWithKeys(
  payload: WebhookPayload,
  headers: WebhookHeaders,
  keys: readonly DecodedKey[],
  options: ResolvedVerifyOptions,
): VerifiedDelivery {
  const body = rawPayload(payload, options.maxPayloadBytes);
  const id = readHeader(headers, 'webhook-id', ', ');
  const timestampHeader = readHeader(headers, 'webhook-timestamp', ', ');
  const signatureHeader = readHeader(headers, 'webhook-signature', ' ');
  if (id === undefined) throw missing('webhook-id');
  if (timestampHeader === undefined) throw missing('webhook-timestamp');
  if (signatureHeader === undefined) throw missing('webhook-signature');

  const timestamp = checkTimestamp(timestampHeader, options.now(), options.toleranceSeconds);
  const expected = keys.map(({ key }) => computeSignature(key, id, timestampHeader, body));
  const matched = matchingSignature(signatureHeader, expected);
  if (matched === -1) {
    throw new WebhookVerificationError('invalid_signature', 'no v1 signature in webhook-signature matches the secret');
  }
  return { id, timestamp, keyId: keys[matched]!.id, event: parseEvent(body, id) };
}

function missing(name: string): WebhookVerificationError {
  return new WebhookVerificationError('missing_header', `the ${name} header is missing or empty`);
}
