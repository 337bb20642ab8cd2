import { Buffer } from 'node:buffer';

/** A secret as the service hands it out, or a list of them during rotation. */
export type WebhookSecret = string | readonly string[];

const PREFIX = 'whsec_';
// Standard base64, padded or not; Buffer.from alone would silently skip bad characters.
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}(?:==)?|[A-Za-z0-9+/]{3}=?)?$/;

/** Turns one secret into HMAC key bytes (spec section 5, rule 3). Throws `TypeError`. */
export function decodeSecret(secret: string): Buffer {
  if (typeof secret !== 'string') {
    throw new TypeError('svc-webhooks: a secret must be a string');
  }
  if (!secret.startsWith(PREFIX)) {
    // Legacy secrets are their own UTF-8 bytes, not base64.
    if (secret.length === 0) throw new TypeError('svc-webhooks: the secret is empty');
    return Buffer.from(secret, 'utf8');
  }
  const encoded = secret.slice(PREFIX.length);
  if (encoded.length === 0 || !BASE64.test(encoded)) {
    throw new TypeError('svc-webhooks: a secret starting with "whsec_" must continue with non-empty base64');
  }
  return Buffer.from(encoded, 'base64');
}

/** Decodes one secret or a non-empty list of them. Throws `TypeError`. */
export function decodeSecrets(secret: WebhookSecret): Buffer[] {
  if (typeof secret === 'string') return [decodeSecret(secret)];
  if (!Array.isArray(secret)) {
    throw new TypeError('svc-webhooks: the secret must be a string or an array of strings');
  }
  if (secret.length === 0) throw new TypeError('svc-webhooks: the list of secrets is empty');
  return secret.map(decodeSecret);
}
