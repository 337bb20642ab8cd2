/**
 * `work` on a real Redis, on both BullMQ majors: the typed handler
 * of each queued event runs once under the dedup store's lease, whatever
 * re-runs or copies its job; a handler that fails is left to BullMQ's
 * attempts, its error the job's failedReason and stacktrace, and a job out
 * of them keeps its event for a retry by hand.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { enqueue, jobIdOf, work, type BullMQWorker, type BullMQWorkerOptions } from '../../../src/queues/bullmq/index.js';
import type { WorkerOptions } from 'bullmq';
import type { WebhookDelivery, WebhookEvent } from '../../../src/index.js';
import { recordingLogger } from '../../helpers/recording-logger.js';
import { redisUrl } from '../../helpers/redis-clients.js';
import { BULLMQ_MAJORS, connectionTo, dropQueue, uniqueQueueName, type BullMQMajor, type TestJob, type TestQueue } from '../../helpers/bullmq-majors.js';
import { eventOf } from '../../helpers/events.js';
import { hearJobs } from '../../helpers/heard-traces.js';
import { deliveryOf, keyOf } from '../../helpers/signed-request.js';
import { TestDedupStore } from '../../helpers/test-dedup-store.js';
import { WebhookOptionsError } from '../../../src/base/options-error.js';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A queue of its own, and workers on it from `major`, all closed after the test. */
function setUp(major: BullMQMajor) {
  const queue = major.queue(uniqueQueueName('worker'), redisUrl());
  cleanups.push(() => dropQueue(queue));
  /** A worker on the queue, its BullMQ options over a connection to the test's Redis. */
  const start = async <S extends object = {}>(options: Omit<BullMQWorkerOptions<S>, 'worker'> & { readonly worker?: Partial<WorkerOptions> }): Promise<BullMQWorker> => {
    const worker = await work(queue.name, { bullmq: major.classes, ...options, worker: { connection: connectionTo(redisUrl()), ...options.worker } } as BullMQWorkerOptions<S>);
    worker.on('error', () => {});
    cleanups.push(() => worker.close());
    return worker;
  };
  return { queue, start, handoff: enqueue(queue) };
}

/** The job id of event `id` as enqueue adds it: its dedup key under SECRET. */
const jobOf = (id: string): string => jobIdOf(keyOf(id));

/** The job once it is completed or failed. */
async function settled(queue: TestQueue, id: string, timeout = 10_000): Promise<TestJob> {
  return vi.waitFor(
    async () => {
      expect(['completed', 'failed']).toContain(await (await queue.getJob(id))?.getState());
      // Read once settled: a job read before holds the fields it had then.
      return (await queue.getJob(id))!;
    },
    { timeout, interval: 50 },
  );
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each(BULLMQ_MAJORS)('work on $name', (major) => {
  it("runs the event's handler with the delivery the receiver had: id, timestamp, keyId, tenant, dedupKey", async () => {
    const { queue, start, handoff } = setUp(major);
    const dedup = new TestDedupStore();
    const calls: Array<[WebhookEvent, WebhookDelivery]> = [];
    await start({ dedup: { store: dedup }, on: { 'call.missed': async (event, delivery) => void calls.push([event, delivery]) } });
    await handoff.hand(deliveryOf({ id: 'evt_1', keyId: 'k2', tenant: 'acme' }));

    const job = await settled(queue, jobOf('evt_1'));
    expect([await job.getState(), job.returnvalue]).toEqual(['completed', 'processed']);
    expect(calls).toEqual([[eventOf('call.missed', 'evt_1'), deliveryOf({ id: 'evt_1', keyId: 'k2', tenant: 'acme' })]]);
    expect(dedup.stateOf(keyOf('evt_1'))).toBe('done');
  });

  it('does not run a handler again for an event queued again after its job was removed, and tells the job channel so', async () => {
    const { queue, start, handoff } = setUp(major);
    const jobs = hearJobs();
    cleanups.push(async () => jobs.stop());
    let calls = 0;
    await start({ dedup: { store: new TestDedupStore() }, on: { 'call.missed': () => void calls++ } });
    await handoff.hand(deliveryOf());
    await (await settled(queue, jobOf('evt_1'))).remove();
    await handoff.hand(deliveryOf());

    expect((await settled(queue, jobOf('evt_1'))).returnvalue).toBe('duplicate');
    expect(calls).toBe(1);
    expect(jobs.outcomes.get(jobOf('evt_1'))).toEqual(['processed', 'duplicate']);
  });

  it('runs the handler once when two workers take copies of the event at once, the copy that finds it running postponed', async () => {
    const { queue, start } = setUp(major);
    const jobs = hearJobs();
    cleanups.push(async () => jobs.stop());
    const dedup = new TestDedupStore();
    let calls = 0;
    const on = { 'call.missed': async () => void (calls++, await pause(300)) };
    await start({ dedup: { store: dedup, leaseMs: 400 }, on });
    await start({ dedup: { store: dedup, leaseMs: 400 }, on });
    const data = { delivery: deliveryOf() };
    await Promise.all(['copy-a', 'copy-b'].map((jobId) => queue.add('call.missed', data, { jobId })));

    const results = await Promise.all(['copy-a', 'copy-b'].map(async (id) => (await settled(queue, id)).returnvalue));
    expect(results.sort()).toEqual(['duplicate', 'processed']);
    expect(calls).toBe(1);
    // The copy that found the event running waited, without an attempt, until it was done.
    const [first, second] = ['copy-a', 'copy-b'].map((id) => jobs.outcomes.get(id) ?? []).sort((a, b) => a.length - b.length);
    expect(first).toEqual(['processed']);
    expect(second).toEqual([...second!.slice(0, -1).map(() => 'postponed'), 'duplicate']);
    expect(second!.length).toBeGreaterThan(1);
  });

  it('does not run the handler again when BullMQ re-runs the job as stalled while its first run goes on', async () => {
    const { queue, start, handoff } = setUp(major);
    const dedup = new TestDedupStore();
    let calls = 0;
    let finish = (): void => {};
    const on = { 'call.missed': () => new Promise<void>((resolve) => ((calls++, (finish = resolve)))) };
    // The first worker stops renewing BullMQ's lock on the job, which the second then finds stalled.
    await start({ dedup: { store: dedup, leaseMs: 400 }, on, worker: { skipLockRenewal: true, skipStalledCheck: true, lockDuration: 300 } });
    await handoff.hand(deliveryOf());
    await vi.waitFor(() => expect(calls).toBe(1));
    const second = await start({ dedup: { store: dedup, leaseMs: 400 }, on, worker: { lockDuration: 300, stalledInterval: 200 } });
    const stalled = new Promise((resolve) => second.on('stalled', resolve));
    await stalled;
    await pause(300);
    finish();

    expect((await settled(queue, jobOf('evt_1'))).returnvalue).toBe('duplicate');
    expect(calls).toBe(1);
    expect(dedup.stateOf(keyOf('evt_1'))).toBe('done');
  });

  it("leaves a failing handler to BullMQ's attempts; out of them, the job keeps its event and a retry by hand runs it", async () => {
    const { queue, start, handoff } = setUp(major);
    const dedup = new TestDedupStore();
    const heard: unknown[] = [];
    let failing = true;
    const broken = new Error('the transcript service is down');
    const on = {
      'call.missed': () => {
        if (failing) throw broken;
      },
    };
    await start({ dedup: { store: dedup }, on, onHandlerError: (error, event, delivery) => void heard.push([error, event.id, delivery]) });
    const handoffWithAttempts = enqueue(queue, { job: { attempts: 2 } });
    await handoffWithAttempts.hand(deliveryOf());

    const failed = await settled(queue, jobOf('evt_1'));
    expect([await failed.getState(), failed.attemptsMade, failed.failedReason]).toEqual(['failed', 2, 'the transcript service is down']);
    // The handler's own stack, each attempt's, this spec's frames in it.
    expect(failed.stacktrace).toEqual([broken.stack, broken.stack]);
    expect(broken.stack).toMatch(/work\.test\.ts:\d+:\d+/);
    expect(failed.data).toEqual({ delivery: deliveryOf() });
    expect(heard).toEqual([
      [broken, 'evt_1', deliveryOf()],
      [broken, 'evt_1', deliveryOf()],
    ]);
    expect(dedup.stateOf(keyOf('evt_1'))).toBe('absent');

    failing = false;
    await failed.retry();
    await vi.waitFor(async () => expect(await failed.getState()).toBe('completed'));
    expect(dedup.stateOf(keyOf('evt_1'))).toBe('done');
    void handoff;
  });

  it("gives handlers their schema's output, and fails the job of an event that fails its schema", async () => {
    const { queue, start, handoff } = setUp(major);
    const seen: unknown[] = [];
    const schemas = { 'call.missed': z.object({ id: z.string().startsWith('evt_'), type: z.literal('call.missed') }).transform(({ id }) => ({ short: id })) };
    await start({ dedup: { store: new TestDedupStore() }, schemas, onHandlerError: () => {}, on: { 'call.missed': (event) => void seen.push(event.short) } });
    await handoff.hand(deliveryOf({ id: 'evt_1' }));
    await handoff.hand(deliveryOf({ id: 'bad_1' }));

    expect((await settled(queue, jobOf('evt_1'))).returnvalue).toBe('processed');
    expect(seen).toEqual(['evt_1']);
    const bad = await settled(queue, jobOf('bad_1'));
    expect([await bad.getState(), bad.failedReason]).toEqual(['failed', 'the event failed the schema for its type at $.id']);
  });

  it("fails the job without further attempts when the handler throws BullMQ's UnrecoverableError, as any processor may", async () => {
    const { queue, start } = setUp(major);
    let calls = 0;
    await start({
      dedup: { store: new TestDedupStore() },
      onHandlerError: () => {},
      on: {
        'call.missed': () => {
          calls += 1;
          // BullMQ knows it by its name.
          throw Object.assign(new Error('the customer is gone'), { name: 'UnrecoverableError' });
        },
      },
    });
    await enqueue(queue, { job: { attempts: 3 } }).hand(deliveryOf());
    const failed = await settled(queue, jobOf('evt_1'));
    expect([await failed.getState(), failed.attemptsMade, failed.failedReason, calls]).toEqual(['failed', 1, 'the customer is gone', 1]);
  });

  it('fails the job of a handler that threw no Error with the refusal a receiver would have answered', async () => {
    const { queue, start, handoff } = setUp(major);
    await start({
      dedup: { store: new TestDedupStore() },
      onHandlerError: () => {},
      on: {
        'call.missed': () => {
          throw 'the transcript service is down';
        },
      },
    });
    await handoff.hand(deliveryOf());
    expect((await settled(queue, jobOf('evt_1'))).failedReason).toBe('the handler for this event failed; retry later');
  });

  it("fails the job of an unknown type under unknownEvents: 'reject', and completes it under the default", async () => {
    const { queue, start, handoff } = setUp(major);
    await start({ dedup: { store: new TestDedupStore() }, onHandlerError: () => {}, unknownEvents: 'reject', on: {} });
    await handoff.hand(deliveryOf({ type: 'call.transcribed.v9' }));
    expect((await settled(queue, jobOf('evt_1'))).failedReason).toBe('this receiver refuses event types it does not know');

    const other = setUp(major);
    await other.start({ dedup: { store: new TestDedupStore() }, on: {} });
    await other.handoff.hand(deliveryOf({ type: 'call.transcribed.v9' }));
    expect((await settled(other.queue, jobOf('evt_1'))).returnvalue).toBe('processed');
  });

  it('keeps a job waiting, without using an attempt, while the dedup store fails, and tells dedup.onError', async () => {
    const { queue, start, handoff } = setUp(major);
    const dedup = new TestDedupStore();
    dedup.failing = true;
    const heard: unknown[] = [];
    let calls = 0;
    await start({ dedup: { store: dedup, leaseMs: 400, onError: (error, context) => void heard.push([(error as Error).message, context]) }, on: { 'call.missed': () => void calls++ } });
    await handoff.hand(deliveryOf());
    await vi.waitFor(() => expect(heard.length).toBeGreaterThan(2));
    expect(await (await queue.getJob(jobOf('evt_1')))!.getState()).not.toBe('failed');
    dedup.failing = false;

    // Only the run that processed it counts as an attempt: the waits before it took none.
    const job = await settled(queue, jobOf('evt_1'));
    expect([job.returnvalue, job.attemptsMade, calls]).toEqual(['processed', 1, 1]);
    expect(heard[0]).toEqual(['the test store is down', { operation: 'begin', key: keyOf('evt_1'), id: 'evt_1', type: 'call.missed' }]);
  });

  it('puts a job whose event another worker holds back in the delayed set for a quarter of the lease, without using an attempt, and runs it once the event is free', async () => {
    const { queue, start, handoff } = setUp(major);
    const dedup = new TestDedupStore();
    // Another worker's claim on the event, which never ends on its own in this store.
    const held = await dedup.begin(keyOf('evt_1'));
    let calls = 0;
    await start({ dedup: { store: dedup, leaseMs: 4000 }, on: { 'call.missed': () => void calls++ } });
    await handoff.hand(deliveryOf());
    await vi.waitFor(async () => expect(await (await queue.getJob(jobOf('evt_1')))?.getState()).toBe('delayed'), { timeout: 5_000, interval: 20 });

    const waiting = (await queue.getJob(jobOf('evt_1')))!;
    // The delay BullMQ keeps is the wait's end less the clock when it moved the job: a millisecond may tick between the two readings.
    expect(waiting.delay).toBeGreaterThanOrEqual(999);
    expect(waiting.delay).toBeLessThanOrEqual(1000);
    expect([waiting.attemptsMade, calls]).toEqual([0, 0]);

    if (held.state !== 'claimed') throw new Error('the test store gave no claim');
    await dedup.release(keyOf('evt_1'), held.token);
    const job = await settled(queue, jobOf('evt_1'));
    expect([job.returnvalue, job.attemptsMade, calls]).toEqual(['processed', 1, 1]);
  });

  it('writes a failing handler and a failing store to its logger, with fields, and nothing on console.error', async () => {
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
    try {
      const { queue, start, handoff } = setUp(major);
      const dedup = new TestDedupStore();
      dedup.failing = true;
      const { logger, lines } = recordingLogger();
      const broken = new Error('the transcript service is down');
      await start({
        dedup: { store: dedup, leaseMs: 400 },
        logger,
        on: {
          'call.missed': () => {
            throw broken;
          },
        },
      });
      await handoff.hand(deliveryOf());
      await vi.waitFor(() => expect(lines).toHaveLength(1));
      dedup.failing = false;
      expect((await settled(queue, jobOf('evt_1'))).failedReason).toBe('the transcript service is down');
      expect(lines).toEqual([
        [
          'warn',
          { code: 'store_failed', operation: 'begin', key: keyOf('evt_1'), id: 'evt_1', type: 'call.missed', errorClass: 'Error', errorMessage: 'the test store is down' },
          `the dedup store failed to begin event ${JSON.stringify(keyOf('evt_1'))} (Error: the test store is down); the job waits in the delayed set and is tried again.`,
        ],
        [
          'warn',
          { code: 'handler_failed', id: 'evt_1', type: 'call.missed', keyId: '0', errorClass: 'Error', errorMessage: 'the transcript service is down', err: broken },
          'event "evt_1" of type "call.missed": the handler failed (Error: the transcript service is down); BullMQ retries its job as its attempts allow',
        ],
      ]);
      expect(errors).not.toHaveBeenCalled();
    } finally {
      errors.mockRestore();
    }
  });

  it('logs a failing handler and a failing store on console.error when no callback is given, each line saying what becomes of the job', async () => {
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
    try {
      const { queue, start, handoff } = setUp(major);
      const dedup = new TestDedupStore();
      dedup.failing = true;
      await start({
        dedup: { store: dedup, leaseMs: 400 },
        on: {
          'call.missed': () => {
            throw new Error('the transcript service is down');
          },
        },
      });
      await handoff.hand(deliveryOf());
      const ours = () => errors.mock.calls.map(([line]) => String(line)).filter((line) => line.startsWith('svc-webhooks:'));
      await vi.waitFor(() => expect(ours()).toHaveLength(1));
      dedup.failing = false;
      expect((await settled(queue, jobOf('evt_1'))).failedReason).toBe('the transcript service is down');
      // Each line's sentence; the handler's is followed by its stack's frames, this spec's first.
      expect(ours().map((line) => line.split('\n')[0])).toEqual([
        `svc-webhooks: the dedup store failed to begin event ${JSON.stringify(keyOf('evt_1'))} (Error: the test store is down); the job waits in the delayed set and is tried again.`,
        'svc-webhooks: event "evt_1" of type "call.missed": the handler failed (Error: the transcript service is down); BullMQ retries its job as its attempts allow',
      ]);
      expect(ours()[1]!.split('\n')[1]).toMatch(/^ {4}at .*work\.test\.ts:\d+:\d+\)?$/);
    } finally {
      errors.mockRestore();
    }
  });

  it("fails a job whose data enqueue did not write, and passes BullMQ's own options on", async () => {
    const { queue, start } = setUp(major);
    const worker = await start({ dedup: { store: new TestDedupStore() }, on: {}, worker: { concurrency: 3, name: 'billing' } });
    expect(worker.opts).toMatchObject({ concurrency: 3, name: 'billing' });
    expect(Object.keys(worker.opts)).not.toContain('dedup');
    expect(Object.keys(worker.opts)).not.toContain('worker');
    await queue.add('call.missed', { id: 'evt_1' } as never, { jobId: 'by-hand' });
    expect((await settled(queue, 'by-hand')).failedReason).toBe('svc-webhooks: this job was not added by enqueue(): its data is not { delivery } of one event');
  });

  it('fails a job whose event has no data.object.id without running a handler, as a receiver refuses such an envelope', async () => {
    const { queue, start } = setUp(major);
    const dedup = new TestDedupStore();
    const calls: string[] = [];
    await start({ dedup: { store: dedup }, on: { 'call.missed': (event) => void calls.push(event.id) } });
    const event = { ...eventOf('call.missed', 'evt_1'), data: { object: {} } };
    await queue.add('call.missed', { delivery: { ...deliveryOf(), event } } as never, { jobId: 'no-object-id' });
    expect((await settled(queue, 'no-object-id')).failedReason).toBe('svc-webhooks: this job was not added by enqueue(): its data is not { delivery } of one event');
    expect(calls).toEqual([]);
    expect(dedup.stateOf(keyOf('evt_1'))).toBe('absent');
  });
});

describe('work options', () => {
  const store = new TestDedupStore();
  const valid = { worker: { connection: connectionTo('redis://127.0.0.1:6379') }, dedup: { store }, on: {} };
  it.each([
    ['no queue name', () => work('', valid), 'svc-webhooks: work needs the name of the queue'],
    ['a queue name that is no string', () => work(42 as never, valid), 'svc-webhooks: work needs the name of the queue'],
    ['no options', () => work('q', undefined as never), 'svc-webhooks: work needs options with on, dedup and worker'],
    ['options that are null', () => work('q', null as never), 'svc-webhooks: work needs options with on, dedup and worker'],
    ['no on', () => work('q', { ...valid, on: undefined as never }), 'svc-webhooks: work needs on, an object of handlers by event type'],
    ['on that is null', () => work('q', { ...valid, on: null as never }), 'svc-webhooks: work needs on, an object of handlers by event type'],
    ['no dedup', () => work('q', { ...valid, dedup: undefined as never }), 'svc-webhooks: dedup must be an object with the store ({ store, leaseMs, … })'],
    ['a store as dedup', () => work('q', { ...valid, dedup: store as never }), 'svc-webhooks: dedup takes options, not the store: give the store as dedup: { store }'],
    ['no dedup.store', () => work('q', { ...valid, dedup: {} as never }), 'svc-webhooks: work needs dedup.store, a DedupStore (begin, complete, release and renew) with a key prefix of its own'],
    ['a dedup.store without renew', () => work('q', { ...valid, dedup: { store: { ...store, begin: async () => ({ state: 'done' as const }) } as never } }), 'svc-webhooks: work needs dedup.store, a DedupStore (begin, complete, release and renew) with a key prefix of its own'],
    ['no worker', () => work('q', { ...valid, worker: undefined as never }), "svc-webhooks: work needs worker, BullMQ's Worker options with its connection"],
    ['a worker that is null', () => work('q', { ...valid, worker: null as never }), "svc-webhooks: work needs worker, BullMQ's Worker options with its connection"],
    ['a lease of 0', () => work('q', { ...valid, dedup: { store, leaseMs: 0 } }), 'svc-webhooks: dedup.leaseMs must be a whole number of milliseconds from 1 to 2147483647'],
    ['maxClaimMs under leaseMs', () => work('q', { ...valid, dedup: { store, leaseMs: 2_000, maxClaimMs: 1_999 } }), 'svc-webhooks: dedup.maxClaimMs must be at least dedup.leaseMs'],
    ['onError that is no function', () => work('q', { ...valid, dedup: { store, onError: 'log' as never } }), 'svc-webhooks: dedup.onError must be a function'],
    ['a handler that is no function', () => work('q', { ...valid, on: { 'call.missed': 'x' as never } }), "svc-webhooks: on['call.missed'] must be a function"],
    ['the leaseMs of rc.1 at the top level', () => work('q', { ...valid, leaseMs: 30_000 } as never), 'svc-webhooks: the option leaseMs is now dedup.leaseMs'],
    ['the onStoreError of rc.1 at the top level', () => work('q', { ...valid, onStoreError: () => undefined } as never), 'svc-webhooks: the option onStoreError is now dedup.onError'],
    ['the connection of rc.1 at the top level', () => work('q', { ...valid, connection: valid.worker.connection } as never), "svc-webhooks: the option connection is now worker.connection, with BullMQ's other Worker options"],
    ['the concurrency of rc.1 at the top level', () => work('q', { ...valid, concurrency: 5 } as never), "svc-webhooks: the option concurrency is now worker.concurrency, with BullMQ's other Worker options"],
    ['bullmq without Worker', () => work('q', { ...valid, bullmq: {} as never }), 'svc-webhooks: bullmq must hold the Worker and DelayedError classes of BullMQ'],
    ['bullmq with DelayedError but no Worker', () => work('q', { ...valid, bullmq: { DelayedError: BULLMQ_MAJORS[0]!.classes.DelayedError } as never }), 'svc-webhooks: bullmq must hold the Worker and DelayedError classes of BullMQ'],
    ['bullmq with Worker but no DelayedError', () => work('q', { ...valid, bullmq: { Worker: BULLMQ_MAJORS[0]!.classes.Worker } as never }), 'svc-webhooks: bullmq must hold the Worker and DelayedError classes of BullMQ'],
  ])('rejects %s with a TypeError', async (_name, create, message) => {
    await expect(create()).rejects.toThrow(new WebhookOptionsError(message));
  });
  it('says how to install BullMQ, with the cause, where it is missing and no bullmq option gives its classes', async () => {
    // work() imports bullmq when called: the spec's own modules stay as loaded.
    vi.doMock('bullmq', () => {
      throw new Error("Cannot find package 'bullmq'");
    });
    try {
      const refused = await work('q', valid).then(
        () => undefined,
        (error: unknown) => error as Error,
      );
      expect(refused?.message).toBe('svc-webhooks: work needs BullMQ 5 or 6 installed (npm install bullmq), or its classes as the bullmq option');
      expect(refused?.cause).toBeDefined();
    } finally {
      vi.doUnmock('bullmq');
    }
  });
});
