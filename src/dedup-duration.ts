/**
 * The duration check both dedup stores apply to `leaseMs` and `ttlMs`: a
 * zero, negative or fractional duration would create a claim that never
 * lives or never dies, and Redis refuses it, so it is a caller mistake.
 */
export function checkDuration(name: string, ms: number): void {
  if (!Number.isSafeInteger(ms) || ms < 1) {
    throw new TypeError(`svc-webhooks: ${name} must be a positive integer of milliseconds`);
  }
}
