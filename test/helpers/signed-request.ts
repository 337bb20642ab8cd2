/** Signed webhook requests on a fixed clock, as the service would send them. */
import { Buffer } from 'node:buffer';
import { sign, type KnownEventType, type WebhookSecret } from '../../src/index.js';

export const SECRET = `whsec_${Buffer.from('adapter-test-secret-0123456789ab').toString('base64')}`;
export const OLD_SECRET = `whsec_${Buffer.from('adapter-test-secret-rotated-away').toString('base64')}`;
/** The receivers' clock in these tests; requests are signed at this instant unless told otherwise. */
export const NOW_SECONDS = 1_700_000_000;
export const now = (): number => NOW_SECONDS * 1000;

export interface SignedRequest {
  readonly body: string;
  readonly headers: Record<string, string>;
}

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
  const headers = sign(body, { id, timestamp, secret });
  return { body, headers: { 'content-type': 'application/json', ...headers } };
}
