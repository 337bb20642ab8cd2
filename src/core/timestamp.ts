/** The `webhook-timestamp` header: whole seconds, within the tolerance of the clock. */
import { WebhookVerificationError } from './errors.js';
import { WebhookOptionsError } from '../base/options-error.js';

// Seconds, digits only: "1e9", " 12", "12.0" and "-1" are all refused, and
// 15 digits keep the value an exact integer far past any real clock.
const SECONDS = /^\d{1,15}$/;

/** `webhook-timestamp` in seconds, or `undefined` when it is no plain integer of seconds. */
export function parseSeconds(header: string | undefined): number | undefined {
  // The check for undefined only types the test: the text "undefined" is no number either.
  // Stryker disable next-line ConditionalExpression
  return header !== undefined && SECONDS.test(header) ? Number(header) : undefined;
}

/** Parses `webhook-timestamp` and checks it against the clock. Returns seconds. */
export function checkTimestamp(header: string, nowMs: number, toleranceMs: number): number {
  const timestamp = parseSeconds(header);
  if (timestamp === undefined) {
    throw new WebhookVerificationError('invalid_timestamp', 'webhook-timestamp must be an integer number of seconds');
  }
  if (!Number.isFinite(nowMs)) {
    // A broken clock must not turn both window checks off.
    throw new WebhookOptionsError('svc-webhooks: the clock (options.now) returned a non-finite number');
  }
  // In milliseconds, so that the window is the same width on both sides of the clock.
  const ageMs = nowMs - timestamp * 1000;
  if (ageMs > toleranceMs) {
    throw new WebhookVerificationError(
      'timestamp_too_old',
      `webhook-timestamp is ${Math.floor(ageMs / 1000)} s in the past; the tolerance is ${toleranceMs / 1000} s`,
    );
  }
  if (-ageMs > toleranceMs) {
    throw new WebhookVerificationError(
      'timestamp_too_new',
      `webhook-timestamp is ${Math.floor(-ageMs / 1000)} s in the future; the tolerance is ${toleranceMs / 1000} s`,
    );
  }
  return timestamp;
}
