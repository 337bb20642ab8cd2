/** Holding a claim from the moment `begin` granted it until the route's outcome is recorded. */
import { LeaseRenewal, type HeldLease } from './lease-renewal.js';
import { retryBefore } from './retry-before.js';
import { storeErrorReporter, type StoreErrorCallback } from './store-error-report.js';

export interface ClaimToHold extends HeldLease {
  /** How long `complete` marks the id done. */
  readonly retentionMs: number;
  /** Told when the store failed to renew or settle until the lease was about to end. */
  readonly onStoreError: StoreErrorCallback;
}

/**
 * Starts renewing the claim's lease and answers its `settle`: called with
 * the status the route answered, it stops the renewal, then completes the
 * claim after a 2xx or releases it after anything else. A store failure is
 * retried until the lease is about to end, since once it ends another
 * delivery may take the event; only then is `onStoreError` told. Settling
 * happens once, however often `settle` is called, and its promise never
 * rejects, so an adapter may leave it running after the response went out.
 */
export function holdClaim(claim: ClaimToHold): (status: number) => Promise<void> {
  const { store, id, token, leaseMs, retentionMs } = claim;
  const report = storeErrorReporter(claim.onStoreError);
  const renewal = new LeaseRenewal(claim, report);
  let settled: Promise<void> | undefined;

  const settle = async (status: number): Promise<void> => {
    const deadline = LeaseRenewal.deadline(renewal.stop(), leaseMs);
    // Only a 2xx tells the sender to stop; anything else must leave the event to its retry.
    const succeeded = status >= 200 && status < 300;
    try {
      await retryBefore(deadline, () => (succeeded ? store.complete(id, token, retentionMs) : store.release(id, token)));
    } catch (error) {
      await report(error);
    }
  };
  return (status) => (settled ??= settle(status));
}
