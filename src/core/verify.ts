/** `verify()` and `verifyDelivery()`: verification in one call, for a request read by the caller. */
import type { WebhookEvent } from './event.js';
import type { WebhookHeaders } from './headers.js';
import { cachedKeys } from './key-cache.js';
import { resolveVerifyOptions, type VerifyOptions } from './options.js';
import type { WebhookPayload } from './payload.js';
import type { WebhookSecret } from './secret.js';
import type { WebhookDelivery } from './delivery.js';
import { verifyWithKeys } from './verify-delivery.js';

/**
 * Verifies a webhook request and returns its id, timestamp and event.
 * Throws `WebhookVerificationError` for a request to refuse, `WebhookOptionsError` for
 * a malformed secret or options.
 */
export function verifyDelivery(
  payload: WebhookPayload,
  headers: WebhookHeaders,
  secret: WebhookSecret,
  options?: VerifyOptions,
): WebhookDelivery {
  return verifyWithKeys(payload, headers, cachedKeys(secret), resolveVerifyOptions(options));
}

/** Verifies a webhook request and returns its parsed event. See `verifyDelivery`. */
export function verify(
  payload: WebhookPayload,
  headers: WebhookHeaders,
  secret: WebhookSecret,
  options?: VerifyOptions,
): WebhookEvent {
  return verifyDelivery(payload, headers, secret, options).event;
}
