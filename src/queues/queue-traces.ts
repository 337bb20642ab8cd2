/**
 * The queues' tracing channels, the same for both engines: one around each
 * job `enqueue` queues, whose subscribers fill the carrier the job takes
 * along (its W3C trace context alone); one around each job a worker runs, in the
 * context a subscriber gives it; and the handler channel around its user
 * code, as in a receiver. Nothing is built while nobody listens.
 */
import { isRecord } from '../base/record.js';
import type { WebhookDelivery } from '../core/delivery.js';
import {
  enqueueRuns,
  handlerRuns,
  jobRuns,
  runWithinTrace,
  type EnqueueTrace,
  type HandlerTrace,
  type JobOutcome,
  type JobTrace,
  type QueueSystem,
} from '../process/diagnostics.js';
import { thrownBehind, type Dispatcher, type HandlerOutcome } from '../process/dispatcher.js';
import { staleDelivery } from '../core/event-order.js';
import { queuedDelivery, type QueuedDelivery } from './queued-delivery.js';

type Writable<T> = { -readonly [K in keyof T]: T[K] };

/**
 * What an engine's send resolves to: the job it created (its id, where the
 * engine gives one at send), or `'duplicate'` for an event it had queued before.
 */
export type Sent = { readonly jobId?: string } | 'duplicate';

/**
 * Queues `delivery` with `send`, which gets the job's data: on the enqueue
 * channel while someone listens there, the data then carrying what its
 * subscribers put in the carrier. Resolves as `Handoff.hand` does.
 */
export async function queueDelivery(
  system: QueueSystem,
  queue: string,
  delivery: WebhookDelivery,
  send: (data: QueuedDelivery) => Promise<Sent>,
): Promise<void | 'duplicate'> {
  // Equivalent: the traced path answers the same while nobody listens, at the cost of a context per job.
  // Stryker disable next-line ConditionalExpression,OptionalChaining
  if (!enqueueRuns?.hasSubscribers) return (await send(queuedDelivery(delivery))) === 'duplicate' ? 'duplicate' : undefined;
  const run: Writable<EnqueueTrace> = { system, queue, delivery, carrier: {} };
  return enqueueRuns.tracePromise(async () => {
    // Subscribers filled the carrier at start, before this runs.
    const sent = await send(queuedDelivery(delivery, traceContextOf(run.carrier)));
    run.outcome = sent === 'duplicate' ? 'duplicate' : 'queued';
    if (sent === 'duplicate') return 'duplicate';
    if (sent.jobId !== undefined) run.jobId = sent.jobId;
    return undefined;
  }, run);
}

/** What a worker's run of one job does through the channels. */
export interface JobRun {
  /** Runs the job's handler: on the handler channel while someone listens there; with its delivery marked stale where `stale`. */
  dispatch(dispatcher: Dispatcher, stale?: boolean): Promise<HandlerOutcome>;
  /** Tells the job channel what became of the job, before the run settles. */
  ended(outcome: JobOutcome): void;
}

/**
 * Runs one job of `queued` with `process`: on the job channel while someone
 * listens there, within the context its subscribers give (its claim,
 * handler and settling alike).
 */
export function runQueuedJob<T>(system: QueueSystem, queue: string, jobId: string, queued: QueuedDelivery, process: (run: JobRun) => Promise<T>): Promise<T> {
  const { delivery } = queued;
  // Equivalent, as in queueDelivery: each guard skips work whose result nobody reads.
  // Stryker disable next-line ConditionalExpression,OptionalChaining,BlockStatement
  if (!jobRuns?.hasSubscribers && !handlerRuns?.hasSubscribers) {
    return process({ dispatch: async (dispatcher, stale) => dispatcher.dispatch(stale === true ? staleDelivery(delivery) : delivery), ended: () => undefined });
  }
  const job: Writable<JobTrace> = { system, queue, jobId, delivery, carrier: traceContextOf(queued.trace) };
  const run: JobRun = {
    dispatch: async (dispatcher, stale) => {
      if (stale === true) job.delivery = staleDelivery(delivery);
      // Stryker disable next-line OptionalChaining
      return handlerRuns?.hasSubscribers ? traceHandler(job, dispatcher) : dispatcher.dispatch(job.delivery);
    },
    ended: (outcome) => void (job.outcome = outcome),
  };
  // Stryker disable next-line ConditionalExpression,OptionalChaining
  if (!jobRuns?.hasSubscribers) return process(run);
  return jobRuns.tracePromise(() => runWithinTrace(job, () => process(run)), job);
}

/** Runs the handler of the job's delivery on the handler channel, which learns whether it failed. */
function traceHandler(job: JobTrace, dispatcher: Dispatcher): Promise<HandlerOutcome> {
  const run: Writable<HandlerTrace> = { entry: job.system, delivery: job.delivery, trace: job };
  return handlerRuns!.tracePromise(async () => {
    const outcome = await runWithinTrace(run, () => dispatcher.dispatch(job.delivery));
    run.failed = outcome.kind === 'failed';
    if (outcome.kind === 'failed' && outcome.error.code === 'handler_failed') run.thrown = thrownBehind(outcome.error);
    return outcome;
  }, run);
}

/** The headers of the W3C trace context: a job carries these alone. */
const TRACE_CONTEXT_HEADERS = ['traceparent', 'tracestate'] as const;

/**
 * The W3C trace context of `headers` (a carrier, or a job's `trace`), string values alone: no `baggage`, which
 * a sender's unsigned header may have put in the request's context, nor any other header.
 */
function traceContextOf(headers: unknown): Record<string, string> {
  const context: Record<string, string> = {};
  if (!isRecord(headers)) return context;
  for (const name of TRACE_CONTEXT_HEADERS) {
    const value = Object.hasOwn(headers, name) ? headers[name] : undefined;
    if (typeof value === 'string') context[name] = value;
  }
  return context;
}
