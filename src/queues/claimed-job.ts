/**
 * A queued delivery run by a worker under its claim, whatever the engine:
 * claim its event in the dedup store, skip it when it was done before or is
 * stale, run its handler otherwise, settle the claim by the outcome, and tell
 * the job channel. Each engine's worker turns the result into its own
 * answer (a BullMQ return value or throw, a Cloudflare ack or retry).
 */
import type { WebhookDelivery } from '../core/delivery.js';
import { claimKey, type ClaimSettings } from '../process/claim.js';
import { jobFailure, type Dispatcher } from '../process/dispatcher.js';
import type { JobRun } from './queue-traces.js';

/** What a claimed run of a job came to. */
export type ClaimedJob =
  /** Done before: nothing ran. */
  | { readonly kind: 'duplicate' }
  /** Another run holds the event or its object, or the store failed: the job waits, using no attempt where the engine allows. */
  | { readonly kind: 'postponed' }
  /** Older than a version of its object processed before (`ordering`): skipped, and taken. */
  | { readonly kind: 'stale' }
  /** The handler ran and resolved. */
  | { readonly kind: 'processed' }
  /** The handler failed, or the event's order could not be read: the job fails with `error`, for the engine's retries. */
  | { readonly kind: 'failed'; readonly error: Error };

const DUPLICATE: ClaimedJob = Object.freeze({ kind: 'duplicate' });
const POSTPONED: ClaimedJob = Object.freeze({ kind: 'postponed' });
const STALE: ClaimedJob = Object.freeze({ kind: 'stale' });
const PROCESSED: ClaimedJob = Object.freeze({ kind: 'processed' });

/** Runs `delivery`'s job under its claim in `claims`' store, telling `job`'s channel how it ended. */
export async function runClaimedJob(job: JobRun, claims: ClaimSettings, dispatcher: Dispatcher, delivery: WebhookDelivery): Promise<ClaimedJob> {
  const attempt = await claimKey(claims, delivery);
  if (attempt.state === 'done') {
    job.ended('duplicate');
    return DUPLICATE;
  }
  // Its order could not be read: it fails as a handler would, and the engine's attempts decide.
  if (attempt.state === 'unordered') {
    job.ended('failed');
    return { kind: 'failed', error: attempt.error };
  }
  // Another run holds it or another event of its object (a copy of the job, or a run the engine found
  // stalled, or one whose process died with its lease alive), or the store failed: later.
  if (attempt.state !== 'claimed') {
    job.ended('postponed');
    return POSTPONED;
  }
  if (attempt.stale && claims.ordering!.staleEvents === 'skip') {
    await attempt.settle(true);
    job.ended('stale');
    return STALE;
  }
  const outcome = await job.dispatch(dispatcher, attempt.stale);
  await attempt.settle(outcome.kind !== 'failed');
  if (outcome.kind === 'failed') {
    job.ended('failed');
    return { kind: 'failed', error: jobFailure(outcome.error) };
  }
  job.ended('processed');
  return PROCESSED;
}
