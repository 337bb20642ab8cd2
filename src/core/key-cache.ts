import type { Buffer } from 'node:buffer';
import { decodeSecret, decodeSecrets, type WebhookSecret } from './secret.js';

// verify() gets the secret on every call; decoding it each time costs more
// than a Map lookup. Bounded so that a process fed ever-new secrets cannot
// grow without limit.
const MAX_ENTRIES = 256;
const cache = new Map<string, Buffer[]>();

function cachedKey(secret: string): Buffer[] {
  let keys = cache.get(secret);
  if (keys === undefined) {
    keys = [decodeSecret(secret)];
    if (cache.size >= MAX_ENTRIES) cache.clear();
    cache.set(secret, keys);
  }
  return keys;
}

/** `decodeSecrets`, remembering what it decoded. Throws `TypeError` as it does. */
export function cachedKeys(secret: WebhookSecret): readonly Buffer[] {
  if (typeof secret === 'string') return cachedKey(secret);
  if (Array.isArray(secret) && secret.length > 0) {
    return secret.flatMap((one: string) => cachedKey(one));
  }
  return decodeSecrets(secret);
}
