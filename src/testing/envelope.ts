/** Test events: ids shaped as the service's and envelopes around any data. */
import { randomBytes } from 'node:crypto';

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** A ULID: 10 characters of milliseconds, then 16 random ones (Crockford base32). */
function ulid(nowMs: number): string {
  let time = '';
  for (let rest = nowMs, i = 0; i < 10; i++, rest = Math.floor(rest / 32)) time = CROCKFORD[rest % 32] + time;
  const random = [...randomBytes(16)].map((byte) => CROCKFORD[byte % 32]).join('');
  return time + random;
}

/** A new id of the service's form: prefix, underscore, ULID (spec section 1). */
export function newId(prefix: string, nowMs = Date.now()): string {
  return `${prefix}_${ulid(nowMs)}`;
}

/**
 * The body of a webhook request (spec section 2, as in fixtures/events): its
 * `id` is the `webhook-id` the request is signed with.
 */
export function eventEnvelope(id: string, type: string, data: unknown, nowMs = Date.now()): string {
  const timestamp = new Date(Math.floor(nowMs / 1000) * 1000).toISOString().replace('.000Z', 'Z');
  return JSON.stringify({ id, type, timestamp, data });
}

/** The `data` of an event when the caller gives none: an object with a fresh id. */
export function defaultData(): { object: { id: string } } {
  return { object: { id: newId('obj') } };
}
