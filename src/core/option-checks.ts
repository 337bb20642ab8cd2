/** The checks options share, each throwing `TypeError` for a caller mistake. */

/** The longest delay a timer takes: beyond it Node fires after 1 ms instead. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * A duration in milliseconds: a zero, negative or fractional one would create
 * a claim that never lives or never dies, and Redis refuses it. `max` is
 * `MAX_TIMER_MS` for a duration that becomes a timer.
 */
export function checkDuration(name: string, ms: number, max = Number.MAX_SAFE_INTEGER): void {
  if (!Number.isSafeInteger(ms) || ms < 1 || ms > max) {
    throw new TypeError(`svc-webhooks: ${name} must be a whole number of milliseconds from 1 to ${max}`);
  }
}

/** A function, or absent: callbacks such as `onError`, and clocks after their default. */
export function checkCallback(name: string, value: unknown): void {
  if (value !== undefined && typeof value !== 'function') throw new TypeError(`svc-webhooks: ${name} must be a function`);
}
