/**
 * The least work that gives verifyAsync()'s result with Web Crypto alone:
 * the secret's key imported once, then per request one `crypto.subtle.sign`
 * over `id.timestamp.body`, one base64 decode, one constant-time compare,
 * one parse. `bench/verify-async.bench.ts` measures the web build against it.
 */

/** A verifier of `secret` (`whsec_` and base64), its key imported once. */
export async function subtleVerifier(secret: string): Promise<(id: string, timestamp: string, signature: string, body: Uint8Array) => Promise<unknown>> {
  const keyBytes = Uint8Array.from(atob(secret.slice('whsec_'.length)), (char) => char.charCodeAt(0));
  const key = await crypto.subtle.importKey('raw', keyBytes, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();
  return async (id, timestamp, signature, body) => {
    const head = encoder.encode(`${id}.${timestamp}.`);
    const content = new Uint8Array(head.length + body.length);
    content.set(head);
    content.set(body, head.length);
    const digest = new Uint8Array(await crypto.subtle.sign('HMAC', key, content));
    const given = Uint8Array.from(atob(signature.slice(3)), (char) => char.charCodeAt(0));
    let difference = given.length ^ digest.length;
    for (let i = 0; i < digest.length; i++) difference |= digest[i]! ^ (given[i] ?? 0);
    if (difference !== 0) throw new Error('signature mismatch');
    return JSON.parse(decoder.decode(body));
  };
}
