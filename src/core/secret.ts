/** Signing secrets: `whsec_` base64 or legacy text, one or several, and their decoded keys. */
import { isRecord } from '../base/record.js';
import { dedupScope } from './dedup-key.js';
import { decodeBase64, SYNC_HMAC, utf8Bytes } from './runtime-crypto.js';
import { isWellFormed } from './well-formed.js';
import { WebhookOptionsError } from '../base/options-error.js';

/** A secret with a name of your choosing, reported as the `keyId` of the deliveries it verifies. */
export interface KeyedSecret {
  /** The name reported as the delivery's `keyId`: `'2024-rotation'`, `'primary'`, … */
  readonly id: string;
  /** The secret: `whsec_` and base64, or a legacy secret read as its UTF-8 bytes. */
  readonly secret: string;
}

/**
 * A secret as the service hands it out, or a list of them during rotation;
 * any of them may be keyed, `{ id, secret }`, to learn which one verified a
 * delivery.
 */
export type WebhookSecret = string | KeyedSecret | readonly (string | KeyedSecret)[];

/** What one secret decodes to: its HMAC key, and the dedup scope of the events it verifies (see `dedupScope`). */
export interface KeyMaterial {
  readonly key: Uint8Array;
  /** `undefined` where the runtime has no synchronous HMAC: the Web Crypto path derives it (`subtle-keys.ts`). */
  readonly scope: string | undefined;
}

/** A secret's key material, and the id that names it: a keyed secret's own, else its position in the list (`'0'` for a lone one). */
export interface DecodedKey extends KeyMaterial {
  readonly id: string;
}

const PREFIX = 'whsec_';
// Standard base64, padded or not; decodeBase64 alone would silently skip bad characters.
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}(?:==)?|[A-Za-z0-9+/]{3}=?)?$/;

/** Turns one secret into HMAC key bytes (spec section 5, rule 3). Throws `WebhookOptionsError`. */
export function decodeSecret(secret: string): Uint8Array {
  if (typeof secret !== 'string') {
    throw new WebhookOptionsError('svc-webhooks: a secret must be a string');
  }
  if (!secret.startsWith(PREFIX)) {
    // Legacy secrets are their own UTF-8 bytes, not base64.
    if (secret.length === 0) throw new WebhookOptionsError('svc-webhooks: the secret is empty');
    return utf8Bytes(secret);
  }
  const encoded = secret.slice(PREFIX.length);
  if (encoded.length === 0 || !BASE64.test(encoded)) {
    throw new WebhookOptionsError('svc-webhooks: a secret starting with "whsec_" must continue with non-empty base64');
  }
  return decodeBase64(encoded);
}

/** One secret's key and dedup scope. Throws `WebhookOptionsError` as `decodeSecret` does. */
export function keyMaterial(secret: string): KeyMaterial {
  const key = decodeSecret(secret);
  return { key, scope: SYNC_HMAC ? dedupScope(key) : undefined };
}

/** Decodes one secret or a non-empty list of them, each with its id. Throws `WebhookOptionsError`. */
export function decodeSecrets(secret: WebhookSecret, decode: (secret: string) => KeyMaterial = keyMaterial): DecodedKey[] {
  const list: readonly unknown[] = Array.isArray(secret) ? secret : [secret];
  if (!Array.isArray(secret) && typeof secret !== 'string' && !isKeyed(secret)) {
    throw new WebhookOptionsError('svc-webhooks: the secret must be a string, { id, secret }, or an array of them');
  }
  if (list.length === 0) throw new WebhookOptionsError('svc-webhooks: the list of secrets is empty');
  const keys = list.map((one, position) => decodeKey(one, position, decode));
  const ids = new Set(keys.map(({ id }) => id));
  if (ids.size !== keys.length) throw new WebhookOptionsError('svc-webhooks: two secrets in the list have the same id');
  return keys;
}

/** One entry of a list, at `position`. */
function decodeKey(entry: unknown, position: number, decode: (secret: string) => KeyMaterial): DecodedKey {
  if (typeof entry === 'string') return { id: String(position), ...decode(entry) };
  if (!isKeyed(entry)) throw new WebhookOptionsError('svc-webhooks: a secret must be a string or { id, secret }');
  if (typeof entry.id !== 'string' || entry.id.length === 0) throw new WebhookOptionsError('svc-webhooks: a keyed secret needs an id, a non-empty string');
  // The id is reported in logs and the outcome header, percent-encoded.
  if (!isWellFormed(entry.id)) throw new WebhookOptionsError('svc-webhooks: a keyed secret\'s id must be well-formed UTF-16 (it holds a lone surrogate)');
  return { id: entry.id, ...decode(entry.secret) };
}

function isKeyed(value: unknown): value is KeyedSecret {
  return isRecord(value) && 'secret' in value;
}
