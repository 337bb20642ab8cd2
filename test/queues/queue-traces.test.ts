/**
 * The queues' tracing channels as a subscriber of `node:diagnostics_channel`
 * sees them, whatever the engine: `queueDelivery` on `svc-webhooks:enqueue`
 * (the carrier its subscribers fill reaches the job's data; the job's id
 * and the outcome at `asyncEnd`), `runQueuedJob` on `svc-webhooks:job` and
 * the handler's run on `svc-webhooks:handler` (the job's carrier, string
 * headers alone; the outcome; what a failing handler threw; the contexts
 * subscribers give with `runWithin`), and nothing of it while nobody listens.
 */
import { tracingChannel } from 'node:diagnostics_channel';
import { afterEach, describe, expect, it } from 'vitest';
import { ENQUEUE_CHANNEL, HANDLER_CHANNEL, JOB_CHANNEL, type EnqueueTrace, type HandlerTrace, type JobTrace } from '../../src/process/diagnostics.js';
import { createDispatcher } from '../../src/process/dispatcher.js';
import { queueDelivery, runQueuedJob, type Sent } from '../../src/queues/queue-traces.js';
import type { QueuedDelivery } from '../../src/queues/queued-delivery.js';
import { deliveryOf } from '../helpers/signed-request.js';

type Events = Parameters<ReturnType<typeof tracingChannel>['subscribe']>[0];
const subscriptions: Array<() => void> = [];
afterEach(() => {
  for (const unsubscribe of subscriptions.splice(0)) unsubscribe();
});

/** Subscribes to `name` for the test; `start` sees each context first, `asyncEnd` once the run settled. */
function listen<C>(name: string, on: { start?: (context: C) => void; asyncEnd?: (context: C) => void; error?: (context: C & { error: unknown }) => void } = {}): C[] {
  const seen: C[] = [];
  const events: Events = {
    start: (context) => {
      seen.push(context as C);
      on.start?.(context as C);
    },
    end: () => undefined,
    asyncStart: () => undefined,
    asyncEnd: (context) => on.asyncEnd?.(context as C),
    error: (context) => on.error?.(context as C & { error: unknown }),
  };
  const channel = tracingChannel(name);
  channel.subscribe(events);
  subscriptions.push(() => channel.unsubscribe(events));
  return seen;
}

const delivery = deliveryOf({ id: 'evt_traced', type: 'call.missed' });

describe('queueDelivery', () => {
  /** A send that records the data it got and answers `sent`. */
  function sender(sent: Sent) {
    const data: QueuedDelivery[] = [];
    return { data, send: async (queued: QueuedDelivery) => (data.push(queued), sent) };
  }

  it('sends the data of the delivery alone, and answers as hand() does, while nobody listens', async () => {
    const queued = sender({ jobId: 'job-1' });
    expect(await queueDelivery('bullmq', 'webhooks', delivery, queued.send)).toBeUndefined();
    expect(queued.data).toEqual([{ delivery }]);
    expect(await queueDelivery('pg-boss', 'webhooks', delivery, sender('duplicate').send)).toBe('duplicate');
  });

  it('gives the job what subscribers put in the carrier at start, and tells them the job id and outcome at asyncEnd', async () => {
    const ended: Array<Pick<EnqueueTrace, 'jobId' | 'outcome'>> = [];
    const traces = listen<EnqueueTrace>(ENQUEUE_CHANNEL, {
      start: (trace) => Object.assign(trace.carrier, { traceparent: '00-abc-def-01' }),
      asyncEnd: ({ jobId, outcome }) => void ended.push({ jobId, outcome }),
    });
    const queued = sender({ jobId: 'job-1' });
    expect(await queueDelivery('bullmq', 'webhooks', delivery, queued.send)).toBeUndefined();
    expect(queued.data).toEqual([{ delivery, trace: { traceparent: '00-abc-def-01' } }]);
    expect(traces[0]).toMatchObject({ system: 'bullmq', queue: 'webhooks', delivery });

    expect(await queueDelivery('pg-boss', 'other', delivery, sender('duplicate').send)).toBe('duplicate');
    expect(ended).toEqual([
      { jobId: 'job-1', outcome: 'queued' },
      { jobId: undefined, outcome: 'duplicate' },
    ]);
  });

  it('gives the job the trace context alone: baggage or any other header a subscriber writes stays out of it', async () => {
    listen<EnqueueTrace>(ENQUEUE_CHANNEL, {
      start: (trace) => Object.assign(trace.carrier, { traceparent: '00-abc-def-01', tracestate: 'k=v', baggage: 'user.id=admin', b3: 'abc-def-1' }),
    });
    const queued = sender({ jobId: 'job-1' });
    await queueDelivery('bullmq', 'webhooks', delivery, queued.send);
    expect(queued.data).toEqual([{ delivery, trace: { traceparent: '00-abc-def-01', tracestate: 'k=v' } }]);
  });

  it('leaves the job id unset for an engine that gives none at send (Cloudflare Queues)', async () => {
    const ended: EnqueueTrace[] = [];
    listen<EnqueueTrace>(ENQUEUE_CHANNEL, { asyncEnd: (trace) => void ended.push(trace) });
    expect(await queueDelivery('cloudflare', 'webhooks', delivery, sender({}).send)).toBeUndefined();
    expect(ended).toMatchObject([{ system: 'cloudflare', outcome: 'queued' }]);
    expect(ended[0]).not.toHaveProperty('jobId');
  });

  it('sends no trace when subscribers leave the carrier empty, and tells them what the send threw', async () => {
    const failures: unknown[] = [];
    listen<EnqueueTrace>(ENQUEUE_CHANNEL, { error: ({ error }) => void failures.push(error) });
    const queued = sender({ jobId: 'job-1' });
    await queueDelivery('bullmq', 'webhooks', delivery, queued.send);
    expect(queued.data).toEqual([{ delivery }]);
    const down = new Error('Redis is down');
    await expect(queueDelivery('bullmq', 'webhooks', delivery, () => Promise.reject(down))).rejects.toBe(down);
    expect(failures).toEqual([down]);
  });
});

describe('runQueuedJob', () => {
  const handled: string[] = [];
  const broken = new Error('handler down');
  const dispatcher = createDispatcher({
    on: {
      'call.missed': (_event, { id }) => void handled.push(id),
      'message.received': () => {
        throw broken;
      },
    },
    onHandlerError: () => undefined,
  });
  afterEach(() => void handled.splice(0));

  it('runs the handler, and publishes nothing, while nobody listens', async () => {
    const outcome = await runQueuedJob('bullmq', 'webhooks', 'job-1', { delivery }, async (run) => {
      run.ended('processed');
      return run.dispatch(dispatcher);
    });
    expect(outcome).toEqual({ kind: 'handled' });
    expect(handled).toEqual(['evt_traced']);
  });

  it("tells the job channel the job, its carrier's string headers and its outcome, and runs it within the subscriber's runWithin", async () => {
    const outcomes: unknown[] = [];
    const within: string[] = [];
    const jobs = listen<JobTrace>(JOB_CHANNEL, {
      start: (job) => {
        job.runWithin = (code) => {
          within.push('job');
          return code();
        };
      },
      asyncEnd: ({ outcome }) => void outcomes.push(outcome),
    });
    const queued = { delivery, trace: { traceparent: '00-abc-def-01', tracestate: 42, baggage: null } } as unknown as QueuedDelivery;
    const result = await runQueuedJob('pg-boss', 'webhooks', 'job-2', queued, async (run) => {
      within.push('process');
      run.ended('duplicate');
      return 'done';
    });
    expect(result).toBe('done');
    expect(within).toEqual(['job', 'process']);
    expect(jobs).toEqual([expect.objectContaining({ system: 'pg-boss', queue: 'webhooks', jobId: 'job-2', delivery, carrier: { traceparent: '00-abc-def-01' } })]);
    expect(outcomes).toEqual(['duplicate']);
  });

  it("gives the job channel the job's trace context alone: baggage another program wrote into the job is not carried", async () => {
    const jobs = listen<JobTrace>(JOB_CHANNEL);
    const queued = { delivery, trace: { traceparent: '00-abc-def-01', tracestate: 'k=v', baggage: 'user.id=admin', b3: 'abc-def-1' } };
    await runQueuedJob('bullmq', 'webhooks', 'job-5', queued, async () => undefined);
    expect(jobs.map((job) => job.carrier)).toEqual([{ traceparent: '00-abc-def-01', tracestate: 'k=v' }]);
  });

  it.each([
    ['none', undefined],
    ['null', null],
    ['a string', 'traceparent'],
  ])('gives a job whose trace is %s an empty carrier', async (_name, trace) => {
    const jobs = listen<JobTrace>(JOB_CHANNEL);
    await runQueuedJob('bullmq', 'webhooks', 'job-3', { delivery, trace } as unknown as QueuedDelivery, async () => undefined);
    expect(jobs.map((job) => job.carrier)).toEqual([{}]);
  });

  it("runs the handler on the handler channel, its trace the job's, within the subscriber's runWithin, and says whether it failed, with what it threw", async () => {
    const within: string[] = [];
    const failed: unknown[] = [];
    const runs = listen<HandlerTrace>(HANDLER_CHANNEL, {
      start: (run) => {
        run.runWithin = (code) => {
          within.push(run.delivery.event.type);
          return code();
        };
      },
      asyncEnd: (run) => void failed.push([run.failed, run.thrown]),
    });
    const failing = deliveryOf({ id: 'evt_failing', type: 'message.received' });
    // Nobody on the job channel: the handler's run still names a JobTrace.
    const outcomes = [
      await runQueuedJob('bullmq', 'webhooks', 'job-4', { delivery }, (run) => run.dispatch(dispatcher)),
      await runQueuedJob('bullmq', 'webhooks', 'job-5', { delivery: failing }, (run) => run.dispatch(dispatcher)),
    ];
    expect(outcomes.map((outcome) => outcome.kind)).toEqual(['handled', 'failed']);
    expect(within).toEqual(['call.missed', 'message.received']);
    expect(failed).toEqual([
      [false, undefined],
      [true, broken],
    ]);
    expect(runs[0]).not.toHaveProperty('thrown');
    expect(runs[0]).toMatchObject({ entry: 'bullmq', delivery, trace: { system: 'bullmq', queue: 'webhooks', jobId: 'job-4', delivery, carrier: {} } });
    expect(handled).toEqual(['evt_traced']);
  });

  it('tells no thrown value for a job refused without a handler throwing', async () => {
    const ended: HandlerTrace[] = [];
    listen<HandlerTrace>(HANDLER_CHANNEL, { asyncEnd: (run) => void ended.push({ ...run }) });
    const rejecting = createDispatcher({ on: {}, unknownEvents: 'reject', onHandlerError: () => undefined });
    const unknown = deliveryOf({ id: 'evt_unknown', type: 'call.transcribed.v9' });
    expect(await runQueuedJob('bullmq', 'webhooks', 'job-7', { delivery: unknown }, (run) => run.dispatch(rejecting))).toMatchObject({ kind: 'failed' });
    expect(ended).toHaveLength(1);
    expect(ended[0]).toMatchObject({ failed: true });
    expect(ended[0]).not.toHaveProperty('thrown');
  });

  it('runs the handler directly when a handler subscriber gives no runWithin', async () => {
    listen<HandlerTrace>(HANDLER_CHANNEL);
    const outcome = await runQueuedJob('pg-boss', 'webhooks', 'job-6', { delivery }, (run) => run.dispatch(dispatcher));
    expect(outcome).toEqual({ kind: 'handled' });
    expect(handled).toEqual(['evt_traced']);
  });
});
