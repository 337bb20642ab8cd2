/**
 * The verifier's options (`toleranceMs`, `now`, `maxPayloadBytes`), checked once and resolved with their
 * defaults.
 */
import { checkCallback, checkOptionsObject } from '../base/option-checks.js';
import { WebhookOptionsError } from '../base/options-error.js';

/** Options of `verify()`, `new Webhook()` and the adapters, checked once. */
export interface VerifyOptions {
  /**
   * How far, in milliseconds, `webhook-timestamp` may lie from the clock, in
   * the past or the future, before the request is refused.
   * @default 300000 (five minutes: spec section 8)
   */
  readonly toleranceMs?: number;
  /**
   * The clock, in milliseconds since the Unix epoch.
   * @default Date.now
   */
  readonly now?: () => number;
  /**
   * The largest body accepted, in bytes; a larger one fails with
   * `payload_too_large` before any hashing.
   * @default 1048576 (1 MiB)
   */
  readonly maxPayloadBytes?: number;
}

/** `VerifyOptions` with their defaults filled in. */
export interface ResolvedVerifyOptions {
  readonly toleranceMs: number;
  readonly now: () => number;
  readonly maxPayloadBytes: number;
}

export const DEFAULT_VERIFY_OPTIONS: ResolvedVerifyOptions = Object.freeze({
  toleranceMs: 300_000,
  now: Date.now,
  maxPayloadBytes: 1024 * 1024,
});

/** Fills in defaults without touching the caller's object. Throws `WebhookOptionsError`. */
export function resolveVerifyOptions(options: VerifyOptions | undefined): ResolvedVerifyOptions {
  if (options === undefined) return DEFAULT_VERIFY_OPTIONS;
  checkOptionsObject('verify', options);
  const {
    toleranceMs = DEFAULT_VERIFY_OPTIONS.toleranceMs,
    now = DEFAULT_VERIFY_OPTIONS.now,
    maxPayloadBytes = DEFAULT_VERIFY_OPTIONS.maxPayloadBytes,
  } = options;
  if (!Number.isSafeInteger(toleranceMs) || toleranceMs < 0) {
    throw new WebhookOptionsError('svc-webhooks: toleranceMs must be a whole number of milliseconds >= 0');
  }
  checkCallback('now', now);
  if (!Number.isSafeInteger(maxPayloadBytes) || maxPayloadBytes < 1) {
    throw new WebhookOptionsError('svc-webhooks: maxPayloadBytes must be a positive integer');
  }
  return { toleranceMs, now, maxPayloadBytes };
}
