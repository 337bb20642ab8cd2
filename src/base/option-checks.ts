/** The checks options share, each throwing `WebhookOptionsError` for a caller mistake. */
import { WebhookOptionsError } from './options-error.js';

/** The longest delay a timer takes: beyond it Node fires after 1 ms instead. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * A duration in milliseconds: a zero, negative or fractional one would create
 * a claim that never lives or never dies, and Redis refuses it. `max` is
 * `MAX_TIMER_MS` for a duration that becomes a timer.
 */
export function checkDuration(name: string, ms: number, max = Number.MAX_SAFE_INTEGER): void {
  if (!Number.isSafeInteger(ms) || ms < 1 || ms > max) {
    throw new WebhookOptionsError(`svc-webhooks: ${name} must be a whole number of milliseconds from 1 to ${max}`);
  }
}

/** A function, or absent: callbacks such as `onError`, and clocks after their default. */
export function checkCallback(name: string, value: unknown): void {
  if (value !== undefined && typeof value !== 'function') throw new WebhookOptionsError(`svc-webhooks: ${name} must be a function`);
}

/** A policy: one of `allowed`, or absent for its default. */
export function checkPolicy<T extends string>(name: string, value: unknown, allowed: readonly T[]): T | undefined {
  if (value === undefined || allowed.includes(value as T)) return value as T | undefined;
  throw new WebhookOptionsError(`svc-webhooks: ${name} must be ${allowed.map((one) => `'${one}'`).join(' or ')}`);
}

/** An options object, or absent for every default; `what` names whose options, for the message. */
export function checkOptionsObject(what: string, value: unknown): void {
  if (value !== undefined && (value === null || typeof value !== 'object')) throw new WebhookOptionsError(`svc-webhooks: ${what} options must be an object`);
}

/**
 * Throws `WebhookOptionsError` for an option of an earlier version that `options`
 * still gives: `renamed` maps its old name to what replaced it. Ignoring it
 * would change what a caller asked for without a word.
 */
export function checkRenamed(options: object, renamed: Readonly<Record<string, string>>): void {
  for (const old in renamed) {
    if (Object.hasOwn(options, old)) throw new WebhookOptionsError(`svc-webhooks: the option ${old} is now ${renamed[old]}`);
  }
}

/**
 * For `checkRenamed`: each key of `options` that is none of `own`, named by
 * its place in the group `group` now, beside `beside` (the options an engine
 * took flat before they were grouped).
 */
export function movedInto(options: object, own: ReadonlySet<string>, group: string, beside: string): Record<string, string> {
  const moved: Record<string, string> = {};
  for (const name of Object.keys(options)) if (!own.has(name)) moved[name] = `${group}.${name}, with ${beside}`;
  return moved;
}
