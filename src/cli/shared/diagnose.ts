/**
 * Why a request does not verify, found by trying it rather than guessed: the
 * core's verdict, then, for a request it refuses, the signature against the
 * usual mistaken keys and re-serialized bodies (within the bounds of
 * `bodyVariants`), and how far the timestamp lies from the clock.
 */
import type { Buffer } from 'node:buffer';
import { WebhookVerificationError } from '../../core/errors.js';
import { readHeader, type WebhookHeaders } from '../../core/headers.js';
import { computeSignature, hasMatchingSignature } from '../../core/signature.js';
import { verifyDelivery } from '../../core/verify.js';
import { HEADER_NAMES } from './header-lines.js';
import { bodyVariants, keyVariants, type BodyChange, type KeyMistake, type SkippedChanges } from './variants.js';

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
  /** The signature, judged whatever the clock says; absent when a header is missing or the search failed. */
  readonly signature?: SignatureFinding;
  /** The changed bodies the search left untried past its bounds. */
  readonly skipped?: SkippedChanges;
  /** The name of the error the search for a cause failed with: the verdict stands without a cause. */
  readonly failed?: string;
}

/** The core's verdict on `suspect`, and for a refused request its likeliest cause; a verified one costs no search. */
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
  let error: WebhookVerificationError;
  try {
    const delivery = verifyDelivery(body, headers, secrets, {
      now: () => nowMs,
      toleranceMs: TOLERANCE_SECONDS * 1000,
      maxPayloadBytes: Number.MAX_SAFE_INTEGER,
    });
    // A delivery verifies only when a v1 entry matches the body as given with the spec's key.
    return { ...found, signature: { kind: 'valid' }, event: { id: delivery.id, type: delivery.event.type } };
  } catch (refusal) {
    if (!(refusal instanceof WebhookVerificationError)) throw refusal;
    error = refusal;
  }
  if (id !== undefined && timestampHeader !== undefined && signatureHeader !== undefined) {
    // The search is a help, not the verdict: one that fails leaves the verdict standing, and says so.
    try {
      Object.assign(found, judgeSignature(body, id, timestampHeader, signatureHeader, secrets));
    } catch (failure) {
      found.failed = (failure as Error).name;
    }
  }
  return { ...found, error };
}

function judgeSignature(body: Buffer, id: string, timestamp: string, header: string, secrets: readonly string[]): Pick<Diagnosis, 'signature' | 'skipped'> {
  if (!header.split(' ').some((entry) => V1_ENTRY.test(entry))) return { signature: { kind: 'no_v1_entry' } };
  const matches = (key: Uint8Array, bytes: Uint8Array): boolean => hasMatchingSignature(header, [computeSignature(key, id, timestamp, bytes)]);
  const keys = secrets.flatMap(keyVariants);
  const [spec, mistaken] = [keys.filter((k) => k.mistake === undefined), keys.filter((k) => k.mistake !== undefined)];
  // Valid as given (refused by the clock, say): no body need be printed again.
  if (spec.some((k) => matches(k.key, body))) return { signature: { kind: 'valid' } };
  const { variants, skipped } = bodyVariants(body);
  const changed = variants.slice(1);
  // Then one thing wrong, the body before the key, then two.
  const tries = [...spec.flatMap((k) => changed.map((b) => [k, b] as const)), ...mistaken.map((k) => [k, variants[0]!] as const), ...mistaken.flatMap((k) => changed.map((b) => [k, b] as const))];
  for (const [key, variant] of tries) {
    if (matches(key.key, variant.bytes)) {
      return {
        signature: {
          kind: 'variant',
          ...(key.mistake === undefined ? {} : { mistake: key.mistake }),
          ...(variant.change === undefined ? {} : { change: variant.change }),
        },
      };
    }
  }
  // A change left untried may have been the one signed: the finding says so.
  return { signature: { kind: 'other_secret' }, ...(skipped !== undefined && { skipped }) };
}
