/**
 * What the worker does with one job: claim its event in the dedup store,
 * run the event's handler under that claim (the lease renewed while it
 * runs), and settle the claim by the outcome. An event done before is not
 * run again; an event another worker holds waits, without using an attempt.
 */
import type { Job } from 'bullmq';
import { WebhookVerificationError } from '../../core/errors.js';
import { holdClaim, tellStoreFailure, type StoreErrorReport } from '../../receive/claim.js';
import type { DeadlineQueue } from '../../receive/deadlines.js';
import type { Dispatcher } from '../../receive/dispatch.js';
import { eventKey } from '../../receive/event-key.js';
import type { DedupStore } from '../../stores/dedup-store.js';
import { readJobData, type WebhookJobData } from './webhook-job.js';

/** What a job's processor resolves to, kept as the job's return value: the handler ran, or had run before. */
export type WebhookJobResult = 'processed' | 'duplicate';

/** How the worker's claims are held. */
export interface ClaimSettings {
  readonly dedup: DedupStore;
  readonly leaseMs: number;
  readonly maxClaimMs: number;
  readonly retentionMs: number;
  readonly report: StoreErrorReport;
  /** Where first renewals wait their turn. */
  readonly renewals: DeadlineQueue;
}

/** Puts the job back in the delayed set without using an attempt: BullMQ's `moveToDelayed`, then its `DelayedError`. */
export type Postpone = (job: Job<WebhookJobData, WebhookJobResult>, token: string | undefined) => Promise<never>;

/**
 * The processor of the worker's jobs. A job whose handler failed (it threw,
 * or the event failed its schema, or `onUnknown: 'reject'` refused its type)
 * rejects with the `WebhookVerificationError` a receiver would have answered,
 * its claim released: BullMQ's `attempts` and `backoff` decide what follows.
 */
export function jobProcessor(dispatcher: Dispatcher, claims: ClaimSettings, postpone: Postpone) {
  const { dedup, leaseMs, maxClaimMs, retentionMs, report, renewals } = claims;
  return async (job: Job<WebhookJobData, WebhookJobResult>, token?: string): Promise<WebhookJobResult> => {
    const { event, context } = readJobData(job.data);
    const key = eventKey(context.id, context.tenant);
    const claimedAt = Date.now();
    let begun: unknown;
    try {
      begun = await dedup.begin(key, leaseMs);
    } catch (error) {
      tellStoreFailure('begin', key, 1, error);
      await report(error, { operation: 'begin', id: key });
      return postpone(job, token);
    }
    const { state, token: leaseToken } = (begun ?? {}) as { state?: unknown; token?: unknown };
    if (state === 'done') return 'duplicate';
    // Another worker runs it (a copy, or the first run of a job BullMQ found stalled): wait for its outcome.
    if (state === 'in_progress') return postpone(job, token);
    if (state !== 'claimed' || typeof leaseToken !== 'string') {
      await report(new TypeError("svc-webhooks: the dedup store's begin answered no known state"), { operation: 'begin', id: key });
      return postpone(job, token);
    }
    const settle = holdClaim({ store: dedup, id: key, token: leaseToken, leaseMs, claimedAt, maxClaimMs, retentionMs, report, renewals });
    const outcome = await dispatcher.dispatch(event, context);
    await settle(outcome.status);
    if (outcome.status >= 200 && outcome.status < 300) return 'processed';
    throw outcome.error ?? new WebhookVerificationError('handler_failed', 'the handler for this event failed');
  };
}
