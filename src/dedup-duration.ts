/** The longest delay a timer takes: beyond it Node fires after 1 ms instead. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * The duration check of the dedup options: a zero, negative or fractional
 * duration would create a claim that never lives or never dies, and Redis
 * refuses it, so it is a caller mistake. `max` is `MAX_TIMER_MS` for a
 * duration that becomes a timer.
 */
export function checkDuration(name: string, ms: number, max = Number.MAX_SAFE_INTEGER): void {
  if (!Number.isSafeInteger(ms) || ms < 1 || ms > max) {
    throw new TypeError(`svc-webhooks: ${name} must be a whole number of milliseconds from 1 to ${max}`);
  }
}
