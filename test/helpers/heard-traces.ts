/** The delivery and job channels heard from a test: each delivery's trace once it is answered, each job run's outcome once it ended. */
import { tracingChannel } from 'node:diagnostics_channel';
import { DELIVERY_CHANNEL, JOB_CHANNEL, type DeliveryTrace, type JobOutcome } from '../../src/index.js';

/** The traces heard so far, and a way to stop listening. */
export interface HeardDeliveries {
  readonly traces: DeliveryTrace[];
  stop(): void;
}

/** Listens on the delivery channel: each trace as it is at asyncEnd, its own fields alone. */
export function hearDeliveries(): HeardDeliveries {
  const traces: DeliveryTrace[] = [];
  const none = (): void => undefined;
  const channel = tracingChannel(DELIVERY_CHANNEL);
  // The context also carries tracePromise's own result: keep the trace's fields.
  const asyncEnd = (message: unknown): void => {
    const { entry, delivery, status, outcome, skewMs } = message as DeliveryTrace;
    traces.push({ entry, delivery, status, outcome, skewMs });
  };
  const handlers = { start: none, end: none, asyncStart: none, asyncEnd, error: none };
  channel.subscribe(handlers);
  return { traces, stop: () => channel.unsubscribe(handlers) };
}

/** The job runs heard so far, by job id, each run's outcome in order; and a way to stop listening. */
export interface HeardJobs {
  readonly outcomes: Map<string, Array<JobOutcome | undefined>>;
  stop(): void;
}

/** Listens on the job channel: the outcome of each run of each job, at asyncEnd (a postponed run ends in `error`, then asyncEnd). */
export function hearJobs(): HeardJobs {
  const outcomes = new Map<string, Array<JobOutcome | undefined>>();
  const none = (): void => undefined;
  const channel = tracingChannel(JOB_CHANNEL);
  const asyncEnd = (message: unknown): void => {
    const { jobId, outcome } = message as { jobId: string; outcome?: JobOutcome };
    outcomes.set(jobId, [...(outcomes.get(jobId) ?? []), outcome]);
  };
  const handlers = { start: none, end: none, asyncStart: none, asyncEnd, error: none };
  channel.subscribe(handlers);
  return { outcomes, stop: () => channel.unsubscribe(handlers) };
}
