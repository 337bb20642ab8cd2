/**
 * Why a request does not verify, found by trying it rather than guessed: the
 * core's verdict, then the signature against the usual mistaken keys and
 * re-serialized bodies, and how far the timestamp lies from the clock.
 */
import type { Buffer } from 'node:buffer';
import { WebhookVerificationError } from '../../core/errors.js';
import { readHeader, type WebhookHeaders } from '../../core/headers.js';
import { computeSignature, hasMatchingSignature } from '../../core/signature.js';
import { verifyDelivery } from '../../core/verify.js';
import { HEADER_NAMES } from './header-lines.js';
import { bodyVariants, keyVariants, type BodyChange, type KeyMistake } from './variants.js';

export const TOLERANCE_SECONDS = 300;
// As the core reads the timestamp: digits only.
const SECONDS = /^\d{1,15}$/;
const V1_ENTRY = /^v1,[A-Za-z0-9+/]{43}=$/;

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

export interface Suspect {
  readonly body: Buffer;
  readonly headers: WebhookHeaders;
  /** Every secret the receiver would accept. */
  readonly secrets: readonly string[];
  /** The clock to judge the timestamp by, in milliseconds. */
  readonly nowMs: number;
}

export type SignatureFinding =
  /** A v1 entry matches the body as given with the spec's key. */
  | { readonly kind: 'valid' }
  /** A v1 entry matches only after a mistake on the key, a change to the body, or both. */
  | { readonly kind: 'variant'; readonly mistake?: KeyMistake; readonly change?: BodyChange }
  /** No entry is a v1 HMAC-SHA256 in base64. */
  | { readonly kind: 'no_v1_entry' }
  /** No variant matches: another secret signed it. */
  | { readonly kind: 'other_secret' };

export interface Diagnosis {
  /** Why the core refuses the request; absent when it verifies. */
  readonly error?: WebhookVerificationError;
  /** The verified event, when it verifies. */
  readonly event?: { readonly id: string; readonly type: string };
  /** The signature headers that are absent or empty. */
  readonly missing: readonly string[];
  /** The webhook-timestamp header as it came, when present. */
  readonly timestampHeader?: string;
  /** How many whole seconds the timestamp lies behind the clock (negative: ahead), when it is a number. */
  readonly behindSeconds?: number;
  /** The signature, judged whatever the clock says; absent when a header is missing. */
  readonly signature?: SignatureFinding;
}

export function diagnose(suspect: Suspect): Diagnosis {
  const { body, headers, secrets, nowMs } = suspect;
  const [id, timestampHeader, signatureHeader] = HEADER_NAMES.map((name) =>
    readHeader(headers, name, name === 'webhook-signature' ? ' ' : ', '),
  );
  const missing = HEADER_NAMES.filter((_, i) => [id, timestampHeader, signatureHeader][i] === undefined);
  const found: Mutable<Omit<Diagnosis, 'error' | 'event'>> = { missing };
  if (timestampHeader !== undefined) {
    found.timestampHeader = timestampHeader;
    if (SECONDS.test(timestampHeader)) found.behindSeconds = Math.round(nowMs / 1000 - Number(timestampHeader));
  }
  if (id !== undefined && timestampHeader !== undefined && signatureHeader !== undefined) {
    found.signature = judgeSignature(body, id, timestampHeader, signatureHeader, secrets);
  }
  try {
    const delivery = verifyDelivery(body, headers, secrets, {
      now: () => nowMs,
      toleranceMs: TOLERANCE_SECONDS * 1000,
      maxPayloadBytes: Number.MAX_SAFE_INTEGER,
    });
    return { ...found, event: { id: delivery.id, type: delivery.event.type } };
  } catch (error) {
    if (!(error instanceof WebhookVerificationError)) throw error;
    return { ...found, error };
  }
}

function judgeSignature(body: Buffer, id: string, timestamp: string, header: string, secrets: readonly string[]): SignatureFinding {
  if (!header.split(' ').some((entry) => V1_ENTRY.test(entry))) return { kind: 'no_v1_entry' };
  const keys = secrets.flatMap(keyVariants);
  const bodies = bodyVariants(body);
  // The spec's reading first, then one thing wrong, then two.
  const tries = [
    ...bodies.map((b) => keys.filter((k) => k.mistake === undefined).map((k) => [k, b] as const)),
    keys.filter((k) => k.mistake !== undefined).map((k) => [k, bodies[0]!] as const),
    keys.filter((k) => k.mistake !== undefined).flatMap((k) => bodies.slice(1).map((b) => [k, b] as const)),
  ].flat();
  for (const [key, variant] of tries) {
    if (hasMatchingSignature(header, [computeSignature(key.key, id, timestamp, variant.bytes)])) {
      if (key.mistake === undefined && variant.change === undefined) return { kind: 'valid' };
      return {
        kind: 'variant',
        ...(key.mistake === undefined ? {} : { mistake: key.mistake }),
        ...(variant.change === undefined ? {} : { change: variant.change }),
      };
    }
  }
  return { kind: 'other_secret' };
}
