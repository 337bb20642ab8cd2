/** Telling `onStoreError` about a claim the store could not renew or settle. */
import { reasonOf } from './error-reason.js';

/** The user's callback. What it answers is awaited, so it may be async; the value is ignored. */
export type StoreErrorCallback = (error: unknown) => unknown;

/**
 * Wraps `onStoreError` so that calling it never rejects: it is awaited, and
 * whatever it throws or rejects with is logged in one line. A callback's
 * failure can then neither change a settled outcome nor become an unhandled
 * rejection that takes the process down.
 */
export function storeErrorReporter(onStoreError: StoreErrorCallback): (error: unknown) => Promise<void> {
  return async (error) => {
    try {
      await onStoreError(error);
    } catch (thrown) {
      console.error(`svc-webhooks: onStoreError threw (${reasonOf(thrown)}); the claim is left to its lease`);
    }
  };
}

/** The default `onStoreError`: one line on the console. */
export function logStoreError(error: unknown): void {
  console.error(
    `svc-webhooks: the dedup store failed until the claim's lease ran out (${reasonOf(error)}); ` +
      'a retry of that event may run the route again',
  );
}
