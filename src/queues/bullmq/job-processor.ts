/**
 * What the worker does with one job: claim its event in the dedup store,
 * run the event's handler under that claim (the lease renewed while it
 * runs), and settle the claim by the outcome. An event done before is not
 * run again; an event another worker holds waits, without using an attempt.
 */
import type { Job } from 'bullmq';
import type { ClaimSettings } from '../../process/claim.js';
import type { Dispatcher } from '../../process/dispatcher.js';
import { runClaimedJob } from '../claimed-job.js';
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
      const claimed = await runClaimedJob(run, claims, dispatcher, job.data.delivery);
      if (claimed.kind === 'failed') throw claimed.error;
      return claimed.kind === 'postponed' ? postpone(job, token) : claimed.kind;
    });
  };
}
