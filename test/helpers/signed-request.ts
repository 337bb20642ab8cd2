/**
 * Signed webhook requests on a fixed clock, as the service would send them,
 * signed by the package's own testing kit; and what a receiver makes of
 * them: the dedup key and the delivery, derived here with `node:crypto`
 * alone, so that a test does not take the code under test for its oracle.
 */
import { Buffer } from 'node:buffer';
import { createHmac } from 'node:crypto';
import type { KnownEventType, WebhookDelivery, WebhookEvent, WebhookSecret } from '../../src/index.js';
import { signedHeaders } from '../../src/testing/index.js';

export const SECRET = `whsec_${Buffer.from('adapter-test-secret-0123456789ab').toString('base64')}`;
export const OLD_SECRET = `whsec_${Buffer.from('adapter-test-secret-rotated-away').toString('base64')}`;
/** The receivers' clock in these tests; requests are signed at this instant unless told otherwise. */
export const NOW_SECONDS = 1_700_000_000;
export const now = (): number => NOW_SECONDS * 1000;

/** A request's body and headers. */
export interface SignedRequest {
  readonly body: string;
  readonly headers: Record<string, string>;
}

/** What `signedRequest` signs. */
export interface RequestSpec {
  readonly id?: string;
  readonly type?: KnownEventType | (string & {});
  readonly secret?: WebhookSecret;
  readonly timestamp?: number;
  /** Replaces the envelope, e.g. with bytes that are not JSON. */
  readonly body?: string;
}

/** An envelope of `type` about `id`, as JSON. */
export function envelope(id: string, type: string): string {
  return JSON.stringify({ id, type, created_at: '2023-11-14T22:13:20Z', data: { object: { id: `obj_${id}` } } });
}

/** A request signed with `secret` (SECRET by default) at `timestamp` (NOW_SECONDS by default). */
export function signedRequest(spec: RequestSpec = {}): SignedRequest {
  const { id = 'evt_1', type = 'call.missed', secret = SECRET, timestamp = NOW_SECONDS } = spec;
  const body = spec.body ?? envelope(id, type);
  return { body, headers: signedHeaders(body, { id, timestamp, secret }) };
}

/**
 * `request` sent again as the same text in UTF-16LE, declared `text/plain; charset=utf-16le`: bytes other
 * than those signed, which a text parser decodes back to the signed text.
 */
export function resentAsUtf16le({ body, headers }: SignedRequest): { readonly body: Uint8Array; readonly headers: Record<string, string> } {
  return { body: Buffer.from(body, 'utf16le'), headers: { ...headers, 'content-type': 'text/plain; charset=utf-16le' } };
}

/** What one secret decodes to: its HMAC key (spec section 5, rule 3), and the dedup scope of what it verifies. */
export function keyMaterialOf(secret: string): { readonly key: Buffer; readonly scope: string } {
  const key = secret.startsWith('whsec_') ? Buffer.from(secret.slice(6), 'base64') : Buffer.from(secret, 'utf8');
  return { key, scope: createHmac('sha256', key).update('svc-webhooks dedup scope v1').digest().subarray(0, 12).toString('base64url') };
}

/** The dedup key of event `id` verified by `secret`: 16 characters naming the secret one way, a colon, the id. */
export function keyOf(id: string, secret: string = SECRET): string {
  return `${keyMaterialOf(secret).scope}:${id}`;
}

/** What `deliveryOf` describes: the request's id, type and secret, and the tenant and keyId a receiver adds. */
export interface DeliverySpec extends Omit<RequestSpec, 'body' | 'secret'> {
  /** The one secret that verified it. */
  readonly secret?: string;
  readonly tenant?: string;
  readonly keyId?: string;
}

/** The delivery a receiver makes of `signedRequest(spec)`. */
export function deliveryOf(spec: DeliverySpec = {}): WebhookDelivery {
  const { id = 'evt_1', type = 'call.missed', secret = SECRET, timestamp = NOW_SECONDS, keyId = '0', tenant } = spec;
  const event = JSON.parse(envelope(id, type)) as WebhookEvent;
  const delivery = { event, id, timestamp, keyId, dedupKey: keyOf(id, secret) };
  return tenant === undefined ? delivery : { ...delivery, tenant };
}

/** A delivery of `event` as a receiver of SECRET would have verified it at NOW_SECONDS. */
export function deliveryOfEvent<E extends WebhookEvent>(event: E): WebhookDelivery<E> {
  return { event, id: event.id, timestamp: NOW_SECONDS, keyId: '0', dedupKey: keyOf(event.id) };
}
