/**
 * The processing side: a pg-boss worker that runs the typed handlers of
 * `on` for each queued event, as a receiver's `on` runs them, with the
 * context the receiver had. The jobs of a batch run concurrently; each
 * handled job is completed, each failed one is left to pg-boss's retries.
 */
import { createDispatcher, type Dispatcher } from '../../receive/dispatch.js';
import type { EventHandlers, EventSchemas, HandlerOptions } from '../../receive/handler-types.js';
import type { PgBossInstance, PgBossJob, PgBossWorkOptions } from './pg-boss-types.js';
import { isQueuedEvent } from '../queued-event.js';

/** Options of `work()`: the handler options of a receiver, and pg-boss's own work options, passed on. */
export interface WorkOptions<S extends EventSchemas = {}> extends Omit<HandlerOptions<S>, 'on'>, PgBossWorkOptions {
  /**
   * One handler per known event type, as a receiver's `on`: each gets the
   * event (its schema's output where `schemas` has one) and the context the
   * receiver had (`id`, `keyId`, `tenant`). A job whose handler resolved is
   * completed; one whose handler threw, or whose event failed its schema, is
   * failed and retried by pg-boss's `retryLimit`, then kept in the failed
   * state with its event. Known types without a handler are completed.
   */
  readonly on: EventHandlers<S>;
}

/** Why the jobs of a batch failed, as pg-boss keeps it in each failed job's output: codes, never the events or what a handler threw. */
class JobsFailedError extends Error {
  override readonly name = 'JobsFailedError';
}

/**
 * Starts a pg-boss worker on `queueName` that runs the handlers of
 * `options.on` for each job `enqueue` sent; resolves to the worker's id
 * (`boss.offWork({ id })` stops it, `boss.offWork(queueName, { id })` on
 * pg-boss 12). pg-boss's work options (`batchSize`,
 * `pollingIntervalSeconds`, …) are passed on. What a handler threw goes to
 * `onHandlerError`; a job that is no queued event is failed, with one line on
 * `console.error`. A handler may run again for the same event (a retry, a
 * job that outlived its expiry, a worker killed before it completed the
 * job): make the side effect idempotent, or record
 * `eventKey(context.id, context.tenant)` with `markProcessed` in the side
 * effect's own transaction. Throws `TypeError` for bad arguments.
 */
export function work<S extends EventSchemas = {}>(boss: PgBossInstance, queueName: string, options: WorkOptions<S>): Promise<string> {
  if (typeof (boss as Partial<PgBossInstance> | null)?.work !== 'function') {
    throw new TypeError('svc-webhooks: work needs a pg-boss instance (new PgBoss(...)) as its first argument');
  }
  if (typeof queueName !== 'string' || queueName === '') throw new TypeError('svc-webhooks: work needs the name of a pg-boss queue');
  if (typeof options !== 'object' || options === null) throw new TypeError('svc-webhooks: work options must be an object');
  const { on, schemas, onUnknown, onHandlerError, ...engineOptions } = options;
  if (on === undefined) throw new TypeError('svc-webhooks: work needs on, an object of handlers by event type');
  const dispatcher = createDispatcher<S>({ on, schemas, onUnknown, onHandlerError })!;
  return boss.work(queueName, { ...engineOptions }, (jobs) => runBatch(boss, queueName, dispatcher, jobs));
}

/**
 * Runs the jobs of a batch at once. pg-boss settles a batch as one: it
 * completes every job still active when this resolves, and fails every job
 * still active when this rejects. So when some failed, the handled ones are
 * completed here first, and the rejection then fails only the others.
 */
async function runBatch(boss: PgBossInstance, queueName: string, dispatcher: Dispatcher, jobs: readonly PgBossJob[]): Promise<void> {
  const failures = await Promise.all(jobs.map((job) => runJob(dispatcher, job)));
  const failed = failures.filter((failure) => failure !== undefined);
  if (failed.length === 0) return;
  const handled = jobs.filter((_job, index) => failures[index] === undefined).map((job) => job.id);
  if (handled.length > 0) await boss.complete(queueName, handled);
  throw new JobsFailedError(`svc-webhooks: ${failed.length} of ${jobs.length} jobs failed (${[...new Set(failed)].join(', ')})`);
}

/** Runs one job's handler; resolves to why it failed (an error code), or `undefined` once handled. Never rejects. */
async function runJob(dispatcher: Dispatcher, job: PgBossJob): Promise<string | undefined> {
  const { data } = job;
  if (!isQueuedEvent(data)) {
    console.error(`svc-webhooks: the pg-boss job ${job.id} holds no queued event (it was not sent by enqueue); it is failed`);
    return 'not_a_queued_event';
  }
  const result = await dispatcher.dispatch(data.event, data.context);
  return result.status < 300 ? undefined : (result.error?.code ?? `status_${result.status}`);
}
