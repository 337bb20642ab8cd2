/**
 * The BullMQ job id of an event: its dedup key, escaped where BullMQ
 * refuses a custom id, so that the id stays readable and no two keys share
 * a job.
 */
import { WebhookOptionsError } from '../../base/options-error.js';

/**
 * The job id of the event whose dedup key is `dedupKey` (a delivery's
 * `dedupKey`). It is the key with `%` written `%25` and `:` written `%3A`
 * (BullMQ refuses a `:` in a custom id), and, when what is left reads as an
 * integer (BullMQ refuses those too), its first character percent-encoded:
 * `a1B2c3D4e5F6g7H8:msg_2Kx` gives `a1B2c3D4e5F6g7H8%3Amsg_2Kx`, and `12`
 * gives `%312`. Percent-decoding gives the key back, so two keys never share
 * a job id.
 */
export function jobIdOf(dedupKey: string): string {
  if (typeof dedupKey !== 'string' || dedupKey === '') throw new WebhookOptionsError('svc-webhooks: a dedup key must be a non-empty string');
  const escaped = dedupKey.replace(/[%:]/g, (char) => (char === '%' ? '%25' : '%3A'));
  // BullMQ's own test for an integer id: the string is what parseInt writes back.
  if (`${Number.parseInt(escaped, 10)}` !== escaped) return escaped;
  return `%${escaped.charCodeAt(0).toString(16).toUpperCase()}${escaped.slice(1)}`;
}
