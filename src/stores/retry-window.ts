/** How long a processed id must be kept: the service's retry window, which every purge of processed ids respects. */
import { checkDuration } from '../base/option-checks.js';
import { WebhookOptionsError } from '../base/options-error.js';

/** The service retries a delivery for about three days: an id must be kept at least that long. */
export const MIN_RETENTION_MS = 3 * 24 * 3600_000;

/** The default age past which a purge deletes a processed id: four days. */
const DEFAULT_PURGE_AGE_MS = 4 * 24 * 3600_000;

/** A purge's `olderThanMs`, or its default; throws `WebhookOptionsError` for a bad one, an age under three days among them. */
export function purgeAge(olderThanMs: number | undefined): number {
  const age = olderThanMs ?? DEFAULT_PURGE_AGE_MS;
  checkDuration('olderThanMs', age);
  if (age < MIN_RETENTION_MS) {
    throw new WebhookOptionsError(`svc-webhooks: olderThanMs must be at least ${MIN_RETENTION_MS} (three days, the retry window)`);
  }
  return age;
}
