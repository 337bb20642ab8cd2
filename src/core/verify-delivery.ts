/** The verification of one request, step by step: size, headers, timestamp, signature, envelope. */
import type { WebhookDelivery } from './delivery.js';
import { WebhookVerificationError } from './errors.js';
import { parseEvent } from './event.js';
import { readHeader, type WebhookHeaders } from './headers.js';
import type { ResolvedVerifyOptions } from './options.js';
import { rawPayload, type WebhookPayload } from './payload.js';
import type { DecodedKey } from './secret.js';
import { SYNC_HMAC } from './runtime-crypto.js';
import { computeSignature, matchesCandidate, signatureCandidates } from './signature.js';
import { dedupKey, dedupScope } from './dedup-key.js';
import { signedContent, subtleKeyOf, subtleSignature } from './subtle-keys.js';
import { checkTimestamp } from './timestamp.js';

/** A request that passed every check a secret is not needed for; only its signature is left to check. */
export interface SignedRequest {
  readonly body: string | Uint8Array;
  readonly id: string;
  readonly timestampHeader: string;
  readonly timestamp: number;
  /** The well-formed `v1` digests of `webhook-signature`: never empty. */
  readonly candidates: readonly Uint8Array[];
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

  const timestamp = checkTimestamp(timestampHeader, options.now(), options.toleranceMs);
  const candidates = signatureCandidates(signatureHeader);
  if (candidates.length === 0) throw noMatch();
  return { body, id, timestampHeader, timestamp, candidates };
}

/**
 * The signature check on `keys`, then the envelope. The first key in the
 * list that any signature matches verifies the request, whatever the order
 * of the header's entries: a request signed with two keys the list holds
 * is scoped by the one listed first. `tenant` names the tenant whose keys
 * they are, for a receiver of many. Throws `WebhookVerificationError`.
 */
export function matchSignedRequest(request: SignedRequest, keys: readonly DecodedKey[], tenant?: string): WebhookDelivery {
  const { body, id, timestampHeader, candidates } = request;
  // One key's digest at a time, in the list's order: the first that matches is the one, and the rest need no HMAC.
  let matched: DecodedKey | undefined;
  for (const key of keys) {
    if (matchesCandidate(candidates, computeSignature(key.key, id, timestampHeader, body))) {
      matched = key;
      break;
    }
  }
  if (matched === undefined) throw noMatch();
  // A scope is missing only without a synchronous HMAC, where computeSignature threw before.
  return deliveryOf(request, matched.id, matched.scope ?? dedupScope(matched.key), tenant);
}

/**
 * `matchSignedRequest` with Web Crypto: the same keys in the same order,
 * the same answers and errors, once the digests are computed. Each key is
 * imported into Web Crypto once (`subtleKeyOf`).
 */
export async function matchSignedRequestAsync(request: SignedRequest, keys: readonly DecodedKey[], tenant?: string): Promise<WebhookDelivery> {
  const content = signedContent(request.id, request.timestampHeader, request.body);
  for (const key of keys) {
    const subtleKey = await subtleKeyOf(key.key);
    if (matchesCandidate(request.candidates, await subtleSignature(subtleKey, content))) {
      return deliveryOf(request, key.id, subtleKey.scope, tenant);
    }
  }
  throw noMatch();
}

/**
 * `matchSignedRequest` where the runtime has `node:crypto`, else
 * `matchSignedRequestAsync`: what the entries verify with.
 */
export const matchOnThisRuntime: (request: SignedRequest, keys: readonly DecodedKey[], tenant?: string) => WebhookDelivery | Promise<WebhookDelivery> =
  SYNC_HMAC ? matchSignedRequest : matchSignedRequestAsync;

/** The delivery of a request whose signature the key `keyId`, of dedup scope `scope`, matched; parses its event. */
function deliveryOf(request: SignedRequest, keyId: string, scope: string, tenant: string | undefined): WebhookDelivery {
  const { body, id, timestamp } = request;
  const event = parseEvent(body, id);
  // Literals, not a spread and a field: on Node 20 that gives each delivery a hidden class of its own.
  return tenant === undefined
    ? { event, id, timestamp, keyId, dedupKey: dedupKey(scope, id) }
    : { event, id, timestamp, keyId, tenant, dedupKey: dedupKey(scope, id) };
}

/** The whole check, on keys already decoded. */
export function verifyWithKeys(
  payload: WebhookPayload,
  headers: WebhookHeaders,
  keys: readonly DecodedKey[],
  options: ResolvedVerifyOptions,
): WebhookDelivery {
  return matchSignedRequest(readSignedRequest(payload, headers, options), keys);
}

/** `verifyWithKeys` where the runtime has `node:crypto`, else with Web Crypto (`matchSignedRequestAsync`). */
export function verifyOnThisRuntime(
  payload: WebhookPayload,
  headers: WebhookHeaders,
  keys: readonly DecodedKey[],
  options: ResolvedVerifyOptions,
): WebhookDelivery | Promise<WebhookDelivery> {
  return matchOnThisRuntime(readSignedRequest(payload, headers, options), keys);
}

function missing(name: string): WebhookVerificationError {
  return new WebhookVerificationError('missing_header', `the ${name} header is missing or empty`);
}

function noMatch(): WebhookVerificationError {
  return new WebhookVerificationError('invalid_signature', 'no v1 signature in webhook-signature matches the secret');
}
