/**
 * The processing side: a BullMQ `Worker` that runs the typed handlers of
 * each queued delivery once, under the dedup store's lease on the event.
 */
import type { DelayedError, Worker, WorkerOptions } from 'bullmq';
import { checkLogger, type WebhookLogger } from '../../base/logger.js';
import { checkRenamed, movedInto } from '../../base/option-checks.js';
import { checkClaimOptions, checkDedupObject, claimSettings } from '../../process/claim.js';
import { checkOrdering, type OrderingOptions } from '../../core/event-order.js';
import { createDispatcher } from '../../process/dispatcher.js';
import { handlerErrorLog } from '../../process/handler-options.js';
import type { EventSchemas, HandlerOptions } from '../../process/handler-types.js';
import { storeErrorLog, storeErrorReporter, type StoreErrorCallback } from '../../process/store-failures.js';
import { isDedupStore, type DedupStore } from '../../stores/dedup-store.js';
import type { QueuedDelivery } from '../queued-delivery.js';
import { jobProcessor, type Postpone, type BullMQJobResult } from './job-processor.js';
import { WebhookOptionsError } from '../../base/options-error.js';

/** The classes of BullMQ (5 or 6) the worker is built from. */
export interface BullMQClasses {
  /** BullMQ's `Worker`, which the worker is an instance of. */
  readonly Worker: typeof Worker;
  /** BullMQ's `DelayedError`, which puts a job back in the delayed set without using an attempt. */
  readonly DelayedError: typeof DelayedError;
}

/** The worker `work` resolves to: BullMQ's own, over the jobs `enqueue` adds. */
export type BullMQWorker = Worker<QueuedDelivery, BullMQJobResult>;

/** How a worker processes each event once: the dedup store and its claims. */
export interface WorkerDedupOptions {
  /**
   * Where the worker records the events it processed, keyed on each
   * delivery's `dedupKey`: a `RedisDedupStore` or a `PostgresDedupStore`
   * shared by every worker of the queue. Give it a key prefix (or table) of
   * its own, apart from the receivers' store: the receivers mark an event
   * done once it is queued, the worker once it is processed. Required.
   */
  readonly store: DedupStore;
  /**
   * How long a worker holds its claim on an event while the handler runs;
   * the lease is renewed each third of it. It is how long another worker
   * waits for an event whose worker died mid-handler, before running it
   * again. A job that finds its event held by another worker goes back to
   * the delayed set for a quarter of it, without using an attempt.
   * @default 60000
   */
  readonly leaseMs?: number;
  /**
   * The longest a worker holds its claim, renewals included: a handler that
   * runs longer may be run again by another copy of its job. At least
   * `leaseMs`. Longer than a receiver's ten minutes: no sender waits on a
   * job, and a queue is where work that runs for long belongs.
   * @default 3600000 (an hour), or `leaseMs` if that is longer
   */
  readonly maxClaimMs?: number;
  /**
   * How long the store remembers a processed event. Longer than the sender's
   * retry window of about three days, and than you keep failed jobs to retry by hand.
   * @default 345600000 (four days)
   */
  readonly retentionMs?: number;
  /**
   * Told about every store failure, as a receiver's `dedup.onError`: a
   * `begin` that failed (the job waits in the delayed set and is tried
   * again), and a `complete`, `release` or `renew` that still failed when
   * the lease was about to end. Awaited; what it throws is logged and changes nothing.
   * @default logs one line to `logger` naming the store's error; at most one line per store per 5 s
   */
  readonly onError?: StoreErrorCallback;
}

/**
 * Options of `work()`: the handlers, as a receiver's `on` takes them (each
 * gets the event and its delivery), the dedup store and its claims, and
 * BullMQ's own `Worker` options.
 */
export interface BullMQWorkerOptions<S extends EventSchemas = {}> extends HandlerOptions<S> {
  /** Where and how the worker records the events it processed. Required. */
  readonly dedup: WorkerDedupOptions;
  /**
   * Puts the events about one object in order, as an entry's `ordering`
   * does, where the worker applies them: jobs of one object run one at a
   * time (another waits in the delayed set, using no attempt), and a job
   * older than one of its object processed before is stale: completed
   * without running (its result `'stale'`), or run with `delivery.stale`
   * under `staleEvents: 'run'`. `dedup.store` must order events.
   * @default undefined (each job runs as it comes)
   */
  readonly ordering?: OrderingOptions;
  /**
   * BullMQ's `Worker` options (`connection`, `concurrency`,
   * `lockDuration`, `maxStalledCount`, …), passed to BullMQ as given.
   * Required, as BullMQ requires `connection`.
   */
  readonly worker: WorkerOptions;
  /**
   * Where the worker's lines about what went wrong go (a handler that
   * failed, a store that failed), with fields to filter on, as an entry's `logger`.
   * @default one sentence per line on `console.error`
   */
  readonly logger?: WebhookLogger;
  /**
   * The BullMQ classes to build the worker from, e.g. `await import('bullmq')`
   * where it is installed under another name or bundled.
   * @default await import('bullmq')
   */
  readonly bullmq?: BullMQClasses;
}

/** The options `work` takes at the top level: any other was one of BullMQ's in rc.1, and goes under `worker` now. */
const OWN_OPTIONS: ReadonlySet<string> = new Set<keyof BullMQWorkerOptions>([
  'on',
  'schemas',
  'unknownEvents',
  'onUnknownEvent',
  'onHandlerError',
  'dedup',
  'ordering',
  'worker',
  'logger',
  'bullmq',
]);

/** Options of rc.1 by the place they have now: a caller that still gives one is told, not ignored. */
const MOVED = {
  leaseMs: 'dedup.leaseMs',
  maxClaimMs: 'dedup.maxClaimMs',
  retentionMs: 'dedup.retentionMs',
  onStoreError: 'dedup.onError',
} as const;

/**
 * A BullMQ `Worker` on `queueName` that runs, for each job `enqueue` added,
 * the handler of `on` for its event's type, as a receiver does, under a
 * lease on the event in `dedup`: a handler that succeeded is not run again,
 * whether its job is re-run after stalling, the event is queued again after
 * its job was removed, or two workers take copies. A handler that throws
 * (or an event that fails its schema) fails the job, which BullMQ retries as
 * its `attempts` and `backoff` allow, with what the handler threw as the
 * job's `failedReason` and `stacktrace` when it is an `Error`; a job out of
 * attempts stays in the failed set with its event, to retry by hand. Rejects
 * with `WebhookOptionsError` for bad options, before any worker starts.
 */
export async function work<S extends EventSchemas = {}>(queueName: string, options: BullMQWorkerOptions<S>): Promise<BullMQWorker> {
  if (typeof queueName !== 'string' || queueName === '') throw new WebhookOptionsError('svc-webhooks: work needs the name of the queue');
  if (typeof options !== 'object' || options === null) throw new WebhookOptionsError('svc-webhooks: work needs options with on, dedup and worker');
  if (typeof options.on !== 'object' || options.on === null) throw new WebhookOptionsError('svc-webhooks: work needs on, an object of handlers by event type');
  checkRenamed(options, MOVED);
  checkRenamed(options, movedInto(options, OWN_OPTIONS, 'worker', "BullMQ's other Worker options"));
  const { dedup, worker } = options;
  checkDedupObject(dedup, 'an object with the store ({ store, leaseMs, … })');
  if (!isDedupStore(dedup.store)) {
    throw new WebhookOptionsError('svc-webhooks: work needs dedup.store, a DedupStore (begin, complete, release and renew) with a key prefix of its own');
  }
  if (typeof worker !== 'object' || worker === null) throw new WebhookOptionsError("svc-webhooks: work needs worker, BullMQ's Worker options with its connection");
  const durations = checkClaimOptions(dedup, 3600_000);
  const ordering = checkOrdering(options.ordering);
  const logger = checkLogger(options.logger);
  const dispatcher = createDispatcher(options, handlerErrorLog('BullMQ retries its job as its attempts allow', logger));
  const bullmq =
    options.bullmq ??
    (await import('bullmq').catch((error: unknown) => {
      throw new Error('svc-webhooks: work needs BullMQ 5 or 6 installed (npm install bullmq), or its classes as the bullmq option', { cause: error });
    }));
  if (typeof bullmq.Worker !== 'function' || typeof bullmq.DelayedError !== 'function') {
    throw new WebhookOptionsError('svc-webhooks: bullmq must hold the Worker and DelayedError classes of BullMQ');
  }

  const busyDelayMs = Math.ceil(durations.leaseMs / 4);
  const postpone: Postpone = async (job, token) => {
    await job.moveToDelayed(Date.now() + busyDelayMs, token);
    throw new bullmq.DelayedError();
  };
  const log = storeErrorLog(dedup.store, 'the job waits in the delayed set and is tried again', logger);
  const claims = claimSettings(dedup.store, durations, storeErrorReporter(dedup.onError ?? log, logger), ordering);
  return new bullmq.Worker<QueuedDelivery, BullMQJobResult>(queueName, jobProcessor(dispatcher, claims, postpone), worker);
}

