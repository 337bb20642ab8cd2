/**
 * The BullMQ job id of an event: its dedup key (`eventKey`), escaped where
 * BullMQ refuses a custom id, so that the id stays readable and no two keys
 * share a job.
 */
import { eventKey } from '../../receive/event-key.js';

/**
 * The job id of the event `id` received for `tenant` (or for the one
 * endpoint, without one). It is `eventKey(id, tenant)` with `%` written
 * `%25` and `:` written `%3A` (BullMQ refuses a `:` in a custom id), and,
 * when what is left reads as an integer (BullMQ refuses those too), its
 * first character percent-encoded: `msg_2Kx` stays `msg_2Kx`, tenant
 * `acme` gives `acme%3Amsg_2Kx`, and `12` gives `%312`. Percent-decoding
 * gives the key back, so two keys never share a job id.
 */
export function jobIdOf(id: string, tenant?: string): string {
  if (typeof id !== 'string' || id === '') throw new TypeError('svc-webhooks: an event id must be a non-empty string');
  const escaped = eventKey(id, tenant).replace(/[%:]/g, (char) => (char === '%' ? '%25' : '%3A'));
  // BullMQ's own test for an integer id: the string is what parseInt writes back.
  if (`${Number.parseInt(escaped, 10)}` !== escaped) return escaped;
  return `%${escaped.charCodeAt(0).toString(16).toUpperCase()}${escaped.slice(1)}`;
}
