/**
 * What the worker does with one job: claim its event in the dedup store,
 * run the event's handler under that claim (the lease renewed while it
 * runs), and settle the claim by the outcome. An event done before is not
 * run again; an event another worker holds waits, without using an attempt.
 */
import type { Job } from 'bullmq';
import { claimKey, type ClaimSettings } from '../../process/claim.js';
import { jobFailure, type Dispatcher } from '../../process/dispatcher.js';
import { runQueuedJob } from '../queue-traces.js';
import { isQueuedDelivery, type QueuedDelivery } from '../queued-delivery.js';
import { WebhookOptionsError } from '../../base/options-error.js';

/** What a job's processor resolves to, kept as the job's return value: the handler ran, or had run before, or was skipped as stale (`ordering`). */
export type BullMQJobResult = 'processed' | 'duplicate' | 'stale';

/** Puts the job back in the delayed set without using an attempt: BullMQ's `moveToDelayed`, then its `DelayedError`. */
export type Postpone = (job: Job<QueuedDelivery, BullMQJobResult>, token: string | undefined) => Promise<never>;

/**
 * The processor of the worker's jobs. A job whose handler failed, its claim
 * released, rejects with what the handler threw, when it threw an `Error`
 * (BullMQ keeps its message as the job's `failedReason`, its stack as the
 * job's `stacktrace`); else (the event failed its schema, `unknownEvents:
 * 'reject'` refused its type, the handler threw no `Error`) with the
 * `WebhookHandlerError` a receiver would have answered. BullMQ's `attempts`
 * and `backoff` decide what follows.
 */
export function jobProcessor(dispatcher: Dispatcher, claims: ClaimSettings, postpone: Postpone) {
  return async (job: Job<QueuedDelivery, BullMQJobResult>, token?: string): Promise<BullMQJobResult> => {
    // A job another program added: running handlers on it would give them what their types do not promise.
    if (!isQueuedDelivery(job.data)) throw new WebhookOptionsError('svc-webhooks: this job was not added by enqueue(): its data is not { delivery } of one event');
    return runQueuedJob('bullmq', job.queueName, job.id ?? '', job.data, async (run) => {
      const { delivery } = job.data;
      const attempt = await claimKey(claims, delivery);
      if (attempt.state === 'done') {
        run.ended('duplicate');
        return 'duplicate';
      }
      // Its order could not be read: fails as a handler would, and BullMQ's attempts decide.
      if (attempt.state === 'unordered') {
        run.ended('failed');
        throw attempt.error;
      }
      // Another worker runs it or another event of its object (a copy, or the first run of a job BullMQ found
      // stalled), or the store failed: wait.
      if (attempt.state !== 'claimed') {
        run.ended('postponed');
        return postpone(job, token);
      }
      if (attempt.stale && claims.ordering!.staleEvents === 'skip') {
        await attempt.settle(true);
        run.ended('stale');
        return 'stale';
      }
      const outcome = await run.dispatch(dispatcher, attempt.stale);
      await attempt.settle(outcome.kind !== 'failed');
      run.ended(outcome.kind === 'failed' ? 'failed' : 'processed');
      if (outcome.kind === 'failed') throw jobFailure(outcome.error);
      return 'processed';
    });
  };
}
