import { checkCallback } from './option-checks.js';

/** Options of `verify()`, `new Webhook()` and the adapters, checked once. */
export interface VerifyOptions {
  /**
   * How far, in seconds, `webhook-timestamp` may lie from the clock, in the
   * past or the future, before the request is refused.
   * @default 300 (five minutes: spec section 8)
   */
  readonly toleranceSeconds?: number;
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

export interface ResolvedVerifyOptions {
  readonly toleranceSeconds: number;
  readonly now: () => number;
  readonly maxPayloadBytes: number;
}

export const DEFAULT_VERIFY_OPTIONS: ResolvedVerifyOptions = Object.freeze({
  toleranceSeconds: 300,
  now: Date.now,
  maxPayloadBytes: 1024 * 1024,
});

/** Fills in defaults without touching the caller's object. Throws `TypeError`. */
export function resolveVerifyOptions(options: VerifyOptions | undefined): ResolvedVerifyOptions {
  if (options === undefined) return DEFAULT_VERIFY_OPTIONS;
  if (options === null || typeof options !== 'object') {
    throw new TypeError('svc-webhooks: options must be an object');
  }
  const {
    toleranceSeconds = DEFAULT_VERIFY_OPTIONS.toleranceSeconds,
    now = DEFAULT_VERIFY_OPTIONS.now,
    maxPayloadBytes = DEFAULT_VERIFY_OPTIONS.maxPayloadBytes,
  } = options;
  if (!Number.isFinite(toleranceSeconds) || toleranceSeconds < 0) {
    throw new TypeError('svc-webhooks: toleranceSeconds must be a finite number >= 0');
  }
  checkCallback('now', now);
  if (!Number.isSafeInteger(maxPayloadBytes) || maxPayloadBytes < 1) {
    throw new TypeError('svc-webhooks: maxPayloadBytes must be a positive integer');
  }
  return { toleranceSeconds, now, maxPayloadBytes };
}
