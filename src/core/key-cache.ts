import type { Buffer } from 'node:buffer';
import { decodeSecret, decodeSecrets, type DecodedKey, type WebhookSecret } from './secret.js';

// verify() gets the secret on every call; decoding it each time costs more
// than a Map lookup. Bounded so that a process fed ever-new secrets cannot
// grow without limit.
const MAX_ENTRIES = 256;
const bytes = new Map<string, Buffer>();
// A lone string, the common case, costs no allocation per call.
const lone = new Map<string, readonly DecodedKey[]>();

function cachedBytes(secret: string): Buffer {
  let key = bytes.get(secret);
  if (key === undefined) {
    key = decodeSecret(secret);
    if (bytes.size >= MAX_ENTRIES) bytes.clear();
    bytes.set(secret, key);
  }
  return key;
}

/** `decodeSecrets`, remembering what it decoded. Throws `TypeError` as it does. */
export function cachedKeys(secret: WebhookSecret): readonly DecodedKey[] {
  if (typeof secret !== 'string') return decodeSecrets(secret, cachedBytes);
  let keys = lone.get(secret);
  if (keys === undefined) {
    keys = [{ id: '0', key: cachedBytes(secret) }];
    if (lone.size >= MAX_ENTRIES) lone.clear();
    lone.set(secret, keys);
  }
  return keys;
}
