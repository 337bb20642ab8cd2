/**
 * The receiving side: a `Handoff` that adds one BullMQ job per event, keyed
 * on the event, and resolves once Redis acknowledged it.
 */
import type { JobsOptions } from 'bullmq';
import { beforeDeadline } from '../../base/deadlines.js';
import { checkDuration, checkOptionsObject, MAX_TIMER_MS } from '../../base/option-checks.js';
import type { WebhookDelivery } from '../../core/delivery.js';
import type { Handoff } from '../../process/handoff.js';
import type { QueuedDelivery } from '../queued-delivery.js';
import { queueDelivery } from '../queue-traces.js';
import { jobIdOf } from './job-id.js';
import { WebhookOptionsError } from '../../base/options-error.js';

/** The part of a BullMQ `Queue` (BullMQ 5 or 6) that `enqueue` uses. */
export interface JobQueue {
  /** The queue's name, which traces give as the job's destination (BullMQ's `Queue` has it). */
  readonly name?: string;
  /** Adds a job named `name` with `data` and resolves once Redis acknowledged it. */
  add(name: string, data: QueuedDelivery, opts: JobsOptions): Promise<unknown>;
}

/**
 * BullMQ's job options `enqueue` passes on. The job's id is the event's (see
 * `jobIdOf`), and the options that would make one event several jobs, or
 * none, are not taken.
 */
export type BullMQJobOptions = Omit<JobsOptions, 'jobId' | 'repeat' | 'deduplication' | 'debounce' | 'parent'>;

/** Options of `enqueue()`. */
export interface BullMQEnqueueOptions {
  /**
   * Options for each job, over the queue's `defaultJobOptions`: `attempts`
   * and `backoff` for handlers that fail, `removeOnComplete`,
   * `removeOnFail`, `priority`, … A job removed is no loss: the worker's
   * dedup store, not the job, remembers that an event was processed.
   * @default {} (the queue's `defaultJobOptions`)
   */
  readonly job?: BullMQJobOptions;
  /**
   * How long, in milliseconds, the receiver waits for Redis to acknowledge
   * the job before it answers 503 `handoff_failed`. BullMQ's connection
   * queues commands while Redis is away; without a bound an answer would
   * wait past the sender's 10 s. A job whose add timed out may still land
   * later: the retry then finds it (the same job id), and the worker's
   * dedup store runs its handler once either way.
   * @default 2000
   */
  readonly timeoutMs?: number;
}

const OPTIONS_NOT_TAKEN = ['jobId', 'repeat', 'deduplication', 'debounce', 'parent'] as const;

/**
 * A `Handoff` for the `handoff` option of every entry: each verified
 * delivery becomes one job on `queue`, named after the event's type, with
 * the data `{ delivery }` (see `QueuedDelivery`) and the job id
 * `jobIdOf(delivery.dedupKey)`. The receiver adds it under the delivery's claim, completes the
 * claim once Redis acknowledged the add and answers 202; when the add fails
 * or takes longer than `timeoutMs` it releases the claim and answers 503
 * with `Retry-After`, and the sender retries. Throws `WebhookOptionsError` for a
 * queue without `add` or bad options.
 */
export function enqueue(queue: JobQueue, options: BullMQEnqueueOptions = {}): Handoff {
  if (typeof queue !== 'object' || queue === null || typeof queue.add !== 'function') {
    throw new WebhookOptionsError('svc-webhooks: enqueue needs a BullMQ Queue (an object with an add method)');
  }
  checkOptionsObject('enqueue', options);
  const { job = {}, timeoutMs = 2_000 } = options;
  if (typeof job !== 'object' || job === null) throw new WebhookOptionsError('svc-webhooks: enqueue options.job must be an object');
  const taken = OPTIONS_NOT_TAKEN.find((name) => (job as Record<string, unknown>)[name] !== undefined);
  if (taken !== undefined) throw new WebhookOptionsError(`svc-webhooks: job.${taken} is not taken: each event is one job, keyed on the event`);
  checkDuration('timeoutMs', timeoutMs, MAX_TIMER_MS);
  const each: BullMQJobOptions = { ...job };
  const queueName = typeof queue.name === 'string' ? queue.name : '';
  return {
    hand(delivery: WebhookDelivery): Promise<void | 'duplicate'> {
      return queueDelivery('bullmq', queueName, delivery, async (data) => {
        const jobId = jobIdOf(delivery.dedupKey);
        const added = queue.add(delivery.event.type, data, { ...each, jobId });
        const late = await beforeDeadline(added.then(() => false), timeoutMs, () => true);
        if (late) throw new Error(`svc-webhooks: Redis did not acknowledge the job within ${timeoutMs} ms`);
        return { jobId };
      });
    },
  };
}
