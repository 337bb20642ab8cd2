/**
 * Signing with Web Crypto alone, as the service signs (spec section 5): what
 * the cases that run where no `node:crypto` exists sign their requests with,
 * since the package's `sign()` is synchronous and needs it. Written here
 * rather than taken from the package, so a case does not take the code under
 * test for its oracle.
 */

/** The HMAC key of a secret: `whsec_` and base64, or a legacy secret's UTF-8 bytes. */
function keyBytes(secret: string): Uint8Array {
  if (!secret.startsWith('whsec_')) return new TextEncoder().encode(secret);
  return Uint8Array.from(atob(secret.slice('whsec_'.length)), (char) => char.charCodeAt(0));
}

/** The three headers of `body` signed with `secret` as event `id` at `timestamp` (seconds). */
export async function webSign(body: string, id: string, timestamp: number, secret: string): Promise<Record<string, string>> {
  const key = await crypto.subtle.importKey('raw', keyBytes(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const digest = new Uint8Array(await crypto.subtle.sign('HMAC', key, new TextEncoder().encode(`${id}.${timestamp}.${body}`)));
  const signature = btoa(String.fromCharCode(...digest));
  return { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': `v1,${signature}` };
}

/** Now, in whole seconds. */
export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

/** Whether this runtime hands out no node: modules (Vercel Edge, a Worker without nodejs_compat). */
export function withoutNode(): boolean {
  return (globalThis as { process?: unknown }).process === undefined;
}
