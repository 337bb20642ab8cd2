/** Decoded secrets, cached by the secret's text, so a secret is decoded once per process. */
import { decodeSecrets, keyMaterial, type DecodedKey, type KeyMaterial, type WebhookSecret } from './secret.js';

// verify() gets the secret on every call; decoding it each time costs more
// than a Map lookup. Bounded so that a process fed ever-new secrets cannot
// grow without limit.
const MAX_ENTRIES = 256;
const materials = new Map<string, KeyMaterial>();
// A lone string, the common case, costs no allocation per call.
const lone = new Map<string, readonly DecodedKey[]>();

function cachedMaterial(secret: string): KeyMaterial {
  let material = materials.get(secret);
  if (material === undefined) {
    material = keyMaterial(secret);
    if (materials.size >= MAX_ENTRIES) materials.clear();
    materials.set(secret, material);
  }
  return material;
}

/** `decodeSecrets`, remembering what it decoded. Throws `WebhookOptionsError` as it does. */
export function cachedKeys(secret: WebhookSecret): readonly DecodedKey[] {
  if (typeof secret !== 'string') return decodeSecrets(secret, cachedMaterial);
  let keys = lone.get(secret);
  if (keys === undefined) {
    keys = [{ id: '0', ...cachedMaterial(secret) }];
    if (lone.size >= MAX_ENTRIES) lone.clear();
    lone.set(secret, keys);
  }
  return keys;
}
