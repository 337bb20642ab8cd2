/**
 * The processing side: a pg-boss worker that runs the typed handlers of
 * `on` for each queued delivery, as a receiver's `on` runs them, with the
 * delivery the receiver verified. The jobs of a batch run concurrently;
 * each handled job is completed, each failed one is failed with its own
 * error and left to pg-boss's retries.
 */
import { checkLogger, writeLog, type WebhookLogger } from '../../base/logger.js';
import { checkOptionsObject, checkRenamed, movedInto } from '../../base/option-checks.js';
import { createDispatcher, jobFailure, type Dispatcher } from '../../process/dispatcher.js';
import { handlerErrorLog } from '../../process/handler-options.js';
import type { EventSchemas, HandlerOptions } from '../../process/handler-types.js';
import { runQueuedJob } from '../queue-traces.js';
import { isQueuedDelivery } from '../queued-delivery.js';
import type { PgBossInstance, PgBossJob, PgBossWorkOptions } from './pg-boss-types.js';
import { WebhookOptionsError } from '../../base/options-error.js';

/**
 * Options of `work()`: the handlers, as a receiver's `on` takes them (each
 * gets the event and its delivery), and pg-boss's own work options. A job
 * whose handler resolved is completed; one whose handler threw, or whose
 * event failed its schema, is failed and retried by pg-boss's `retryLimit`,
 * then kept in the failed state with its delivery, its output what the
 * handler threw (an `Error`'s name, message and stack) or the
 * `WebhookHandlerError` a receiver would have answered. Known types without
 * a handler are completed.
 */
export interface PgBossWorkerOptions<S extends EventSchemas = {}> extends HandlerOptions<S> {
  /**
   * pg-boss's work options (`batchSize`, `pollingIntervalSeconds`, …),
   * passed to `boss.work` as given.
   * @default {} (pg-boss's defaults)
   */
  readonly worker?: PgBossWorkOptions;
  /**
   * Where the worker's lines about what went wrong go (a handler that
   * failed, a job that holds no queued delivery), with fields to filter on, as an entry's `logger`.
   * @default one sentence per line on `console.error`
   */
  readonly logger?: WebhookLogger;
}

/** The options `work` takes at the top level: any other was one of pg-boss's in rc.1, and goes under `worker` now. */
const OWN_OPTIONS: ReadonlySet<string> = new Set<keyof PgBossWorkerOptions>(['on', 'schemas', 'unknownEvents', 'onUnknownEvent', 'onHandlerError', 'worker', 'logger']);

/**
 * Starts a pg-boss worker on `queueName` that runs the handlers of
 * `options.on` for each job `enqueue` sent; resolves to the worker's id
 * (`boss.offWork({ id })` stops it, `boss.offWork(queueName, { id })` on
 * pg-boss 12). pg-boss's work options (`batchSize`,
 * `pollingIntervalSeconds`, …) go under `worker`. What a handler threw goes to
 * `onHandlerError`, and is the failed job's output when it is an `Error`; a
 * job that is no queued delivery is failed, with one line to `logger`. A
 * handler may run again for the same event (a retry, a job that outlived its
 * expiry, a worker killed before it completed the job): make the side
 * effect idempotent, or record `delivery.dedupKey` with `markProcessed` in
 * the side effect's own transaction. Throws `WebhookOptionsError` for bad
 * arguments.
 */
export function work<S extends EventSchemas = {}>(boss: PgBossInstance, queueName: string, options: PgBossWorkerOptions<S>): Promise<string> {
  if (typeof (boss as Partial<PgBossInstance> | null)?.work !== 'function') {
    throw new WebhookOptionsError('svc-webhooks: work needs a pg-boss instance (new PgBoss(...)) as its first argument');
  }
  if (typeof queueName !== 'string' || queueName === '') throw new WebhookOptionsError('svc-webhooks: work needs the name of a pg-boss queue');
  if (options === undefined) throw new WebhookOptionsError('svc-webhooks: work needs options with on, an object of handlers by event type');
  checkOptionsObject('work', options);
  checkRenamed(options, movedInto(options, OWN_OPTIONS, 'worker', "pg-boss's other work options"));
  const { on, worker = {}, logger: given } = options;
  if (on === undefined) throw new WebhookOptionsError('svc-webhooks: work needs on, an object of handlers by event type');
  checkOptionsObject('worker', worker);
  const logger = checkLogger(given);
  const dispatcher = createDispatcher(options, handlerErrorLog("pg-boss retries its job as the queue's retryLimit allows", logger));
  return boss.work(queueName, worker, (jobs) => runBatch(boss, queueName, (job) => runJob(dispatcher, logger, queueName, job), jobs));
}


/**
 * Runs the jobs of a batch at once. pg-boss settles a batch as one: it
 * completes every job still active when this resolves, and fails every job
 * still active when this rejects, all with one error. So when some failed,
 * the handled ones are completed here first, then each failed one is failed
 * with its own error (pg-boss keeps it as the job's output), and the batch
 * resolves. Should pg-boss refuse one of those, the batch rejects with its
 * error, and pg-boss fails what is still active: no failed job is completed.
 * An instance without `fail` gets the first failure's error as the batch's.
 */
async function runBatch(boss: PgBossInstance, queueName: string, run: (job: PgBossJob) => Promise<Error | undefined>, jobs: readonly PgBossJob[]): Promise<void> {
  const failures = await Promise.all(jobs.map(run));
  if (failures.every((failure) => failure === undefined)) return;
  const handled = jobs.filter((_job, index) => failures[index] === undefined).map((job) => job.id);
  if (handled.length > 0) await boss.complete(queueName, handled);
  const { fail } = boss;
  if (fail === undefined) throw failures.find((failure) => failure !== undefined);
  const failing = jobs.flatMap((job, index) => {
    const failure = failures[index];
    return failure === undefined ? [] : [fail.call(boss, queueName, job.id, failure)];
  });
  const refused = (await Promise.allSettled(failing)).find((settled) => settled.status === 'rejected');
  if (refused !== undefined) throw refused.reason;
}

/**
 * Runs one job's handler; resolves to what the job is failed with (what the handler threw, as `jobFailure`
 * says), or `undefined` once handled. Never rejects.
 */
async function runJob(dispatcher: Dispatcher, logger: WebhookLogger, queueName: string, job: PgBossJob): Promise<Error | undefined> {
  const { data } = job;
  if (!isQueuedDelivery(data)) {
    writeLog(logger, 'error', { code: 'invalid_job', jobId: job.id }, `the pg-boss job ${job.id} holds no queued delivery (it was not sent by enqueue); it is failed`);
    return new WebhookOptionsError('svc-webhooks: this job was not sent by enqueue(): its data is not { delivery } of one event');
  }
  return runQueuedJob('pg-boss', queueName, job.id, data, async (run) => {
    const outcome = await run.dispatch(dispatcher);
    run.ended(outcome.kind === 'failed' ? 'failed' : 'processed');
    return outcome.kind === 'failed' ? jobFailure(outcome.error) : undefined;
  });
}
