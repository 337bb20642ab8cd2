/** Signing: the three headers the service sends with a body. */
import { rawPayload, type WebhookPayload } from './payload.js';
import { decodeSecrets, type DecodedKey, type WebhookSecret } from './secret.js';
import { encodeBase64 } from './runtime-crypto.js';
import { computeSignature } from './signature.js';
import { WebhookOptionsError } from '../base/options-error.js';

/** The three headers a signed request carries. A type, not an interface, so it is a `HeaderRecord`. */
export type WebhookSignatureHeaders = {
  /** The event id. */
  readonly 'webhook-id': string;
  /** Seconds since the Unix epoch, as decimal digits. */
  readonly 'webhook-timestamp': string;
  /** One `v1,<base64>` entry per secret, separated by spaces. */
  readonly 'webhook-signature': string;
};

/** What to sign with, besides the secret. */
export interface SignOptions {
  /** The event id; the envelope's `id` must equal it. */
  readonly id: string;
  /** Seconds since the Unix epoch, or a `Date`. */
  readonly timestamp: number | Date;
}

/** Signs with keys already decoded: one `v1,` entry per key. */
export function signWithKeys(payload: WebhookPayload, options: SignOptions, keys: readonly DecodedKey[]): WebhookSignatureHeaders {
  const { id, timestamp } = checkedObject(options);
  if (typeof id !== 'string' || id.length === 0) throw new WebhookOptionsError('svc-webhooks: id must be a non-empty string');
  const seconds = timestamp instanceof Date ? Math.floor(timestamp.getTime() / 1000) : timestamp;
  if (!Number.isSafeInteger(seconds) || seconds < 0) {
    throw new WebhookOptionsError('svc-webhooks: timestamp must be whole seconds >= 0 or a valid Date');
  }
  const body = rawPayload(payload, Number.MAX_SAFE_INTEGER);
  const stamp = String(seconds);
  const signature = keys.map(({ key }) => `v1,${encodeBase64(computeSignature(key, id, stamp, body))}`).join(' ');
  return { 'webhook-id': id, 'webhook-timestamp': stamp, 'webhook-signature': signature };
}

/**
 * Signs a payload as the service does, for tests and local senders. With
 * several secrets the signature header holds one entry per secret, as during
 * a rotation.
 */
export function sign(
  payload: WebhookPayload,
  options: SignOptions & { readonly secret: WebhookSecret },
): WebhookSignatureHeaders {
  return signWithKeys(payload, options, decodeSecrets(checkedObject(options).secret));
}

function checkedObject<T>(options: T): T {
  if (options === null || typeof options !== 'object') throw new WebhookOptionsError('svc-webhooks: sign() needs an options object');
  return options;
}
