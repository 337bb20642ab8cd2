/**
 * `createWorker` on a real Redis, on both BullMQ majors: the typed handler
 * of each queued event runs once under the dedup store's lease, whatever
 * re-runs or copies its job; a handler that fails is left to BullMQ's
 * attempts, and a job out of them keeps its event for a retry by hand.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { createWorker, enqueue, type WebhookWorker, type WebhookWorkerOptions } from '../../../src/queues/bullmq/index.js';
import type { HandlerContext, WebhookEvent } from '../../../src/index.js';
import { redisUrl } from '../../dedup/redis-clients.js';
import { BULLMQ_MAJORS, connectionTo, dropQueue, uniqueQueueName, type BullMQMajor, type TestJob, type TestQueue } from '../../helpers/bullmq-majors.js';
import { eventOf } from '../../helpers/events.js';
import { TestDedupStore } from '../../helpers/test-dedup-store.js';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A queue of its own, and workers on it from `major`, all closed after the test. */
function setUp(major: BullMQMajor) {
  const queue = major.queue(uniqueQueueName('worker'), redisUrl());
  cleanups.push(() => dropQueue(queue));
  const start = async <S extends object = {}>(options: Omit<WebhookWorkerOptions<S>, 'connection' | 'bullmq'> & Partial<WebhookWorkerOptions<S>>): Promise<WebhookWorker> => {
    const worker = await createWorker(queue.name, { connection: connectionTo(redisUrl()), bullmq: major.classes, ...options } as WebhookWorkerOptions<S>);
    worker.on('error', () => {});
    cleanups.push(() => worker.close());
    return worker;
  };
  return { queue, start, handoff: enqueue(queue) };
}

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

describe.each(BULLMQ_MAJORS)('createWorker on $name', (major) => {
  it("runs the event's handler with the context the receiver had: id, keyId, tenant", async () => {
    const { queue, start, handoff } = setUp(major);
    const dedup = new TestDedupStore();
    const calls: Array<[WebhookEvent, HandlerContext]> = [];
    await start({ dedup, on: { 'call.missed': async (event, context) => void calls.push([event, context]) } });
    await handoff.hand(eventOf('call.missed', 'evt_1'), { id: 'evt_1', keyId: 'k2', tenant: 'acme' });

    const job = await settled(queue, 'acme%3Aevt_1');
    expect([await job.getState(), job.returnvalue]).toEqual(['completed', 'processed']);
    expect(calls).toEqual([[eventOf('call.missed', 'evt_1'), { id: 'evt_1', keyId: 'k2', tenant: 'acme' }]]);
    expect(dedup.stateOf('acme:evt_1')).toBe('done');
  });

  it('does not run a handler again for an event queued again after its job was removed', async () => {
    const { queue, start, handoff } = setUp(major);
    let calls = 0;
    await start({ dedup: new TestDedupStore(), on: { 'call.missed': () => void calls++ } });
    await handoff.hand(eventOf('call.missed'), { id: 'evt_1' });
    await (await settled(queue, 'evt_1')).remove();
    await handoff.hand(eventOf('call.missed'), { id: 'evt_1' });

    expect((await settled(queue, 'evt_1')).returnvalue).toBe('duplicate');
    expect(calls).toBe(1);
  });

  it('runs the handler once when two workers take copies of the event at once', async () => {
    const { queue, start } = setUp(major);
    const dedup = new TestDedupStore();
    let calls = 0;
    const on = { 'call.missed': async () => void (calls++, await pause(300)) };
    await start({ dedup, on, leaseMs: 400 });
    await start({ dedup, on, leaseMs: 400 });
    const data = { event: eventOf('call.missed'), context: { id: 'evt_1' } };
    await Promise.all(['copy-a', 'copy-b'].map((jobId) => queue.add('call.missed', data, { jobId })));

    const results = await Promise.all(['copy-a', 'copy-b'].map(async (id) => (await settled(queue, id)).returnvalue));
    expect(results.sort()).toEqual(['duplicate', 'processed']);
    expect(calls).toBe(1);
  });

  it('does not run the handler again when BullMQ re-runs the job as stalled while its first run goes on', async () => {
    const { queue, start, handoff } = setUp(major);
    const dedup = new TestDedupStore();
    let calls = 0;
    let finish = (): void => {};
    const on = { 'call.missed': () => new Promise<void>((resolve) => ((calls++, (finish = resolve)))) };
    // The first worker stops renewing BullMQ's lock on the job, which the second then finds stalled.
    await start({ dedup, on, leaseMs: 400, skipLockRenewal: true, skipStalledCheck: true, lockDuration: 300 });
    await handoff.hand(eventOf('call.missed'), { id: 'evt_1' });
    await vi.waitFor(() => expect(calls).toBe(1));
    const second = await start({ dedup, on, leaseMs: 400, lockDuration: 300, stalledInterval: 200 });
    const stalled = new Promise((resolve) => second.on('stalled', resolve));
    await stalled;
    await pause(300);
    finish();

    expect((await settled(queue, 'evt_1')).returnvalue).toBe('duplicate');
    expect(calls).toBe(1);
    expect(dedup.stateOf('evt_1')).toBe('done');
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
    await start({ dedup, on, onHandlerError: (error, event, context) => void heard.push([error, event.id, context]) });
    const handoffWithAttempts = enqueue(queue, { jobOptions: { attempts: 2 } });
    await handoffWithAttempts.hand(eventOf('call.missed'), { id: 'evt_1' });

    const failed = await settled(queue, 'evt_1');
    expect([await failed.getState(), failed.attemptsMade, failed.failedReason]).toEqual(['failed', 2, 'the handler for this event failed; retry later']);
    expect(failed.data).toEqual({ event: eventOf('call.missed'), context: { id: 'evt_1' } });
    expect(heard).toEqual([
      [broken, 'evt_1', { id: 'evt_1' }],
      [broken, 'evt_1', { id: 'evt_1' }],
    ]);
    expect(dedup.stateOf('evt_1')).toBe('absent');

    failing = false;
    await failed.retry();
    await vi.waitFor(async () => expect(await failed.getState()).toBe('completed'));
    expect(dedup.stateOf('evt_1')).toBe('done');
    void handoff;
  });

  it("gives handlers their schema's output, and fails the job of an event that fails its schema", async () => {
    const { queue, start, handoff } = setUp(major);
    const seen: unknown[] = [];
    const schemas = { 'call.missed': z.object({ id: z.string().startsWith('evt_'), type: z.literal('call.missed') }).transform(({ id }) => ({ short: id })) };
    await start({ dedup: new TestDedupStore(), schemas, onHandlerError: () => {}, on: { 'call.missed': (event) => void seen.push(event.short) } });
    await handoff.hand(eventOf('call.missed', 'evt_1'), { id: 'evt_1' });
    await handoff.hand(eventOf('call.missed', 'bad_1'), { id: 'bad_1' });

    expect((await settled(queue, 'evt_1')).returnvalue).toBe('processed');
    expect(seen).toEqual(['evt_1']);
    const bad = await settled(queue, 'bad_1');
    expect([await bad.getState(), bad.failedReason]).toEqual(['failed', 'the event failed the schema for its type at $.id']);
  });

  it('fails the job of an unknown type under onUnknown: reject, and completes it under the default', async () => {
    const { queue, start, handoff } = setUp(major);
    await start({ dedup: new TestDedupStore(), onHandlerError: () => {}, onUnknown: 'reject', on: {} });
    await handoff.hand(eventOf('call.transcribed.v9'), { id: 'evt_1' });
    expect((await settled(queue, 'evt_1')).failedReason).toBe('this receiver refuses event types it does not know');

    const other = setUp(major);
    await other.start({ dedup: new TestDedupStore(), on: {} });
    await other.handoff.hand(eventOf('call.transcribed.v9'), { id: 'evt_1' });
    expect((await settled(other.queue, 'evt_1')).returnvalue).toBe('processed');
  });

  it('keeps a job waiting, without using an attempt, while the dedup store fails, and tells onStoreError', async () => {
    const { queue, start, handoff } = setUp(major);
    const dedup = new TestDedupStore();
    dedup.failing = true;
    const heard: unknown[] = [];
    let calls = 0;
    await start({ dedup, leaseMs: 400, onStoreError: (error, context) => void heard.push([(error as Error).message, context]), on: { 'call.missed': () => void calls++ } });
    await handoff.hand(eventOf('call.missed'), { id: 'evt_1' });
    await vi.waitFor(() => expect(heard.length).toBeGreaterThan(2));
    expect(await (await queue.getJob('evt_1'))!.getState()).not.toBe('failed');
    dedup.failing = false;

    // Only the run that processed it counts as an attempt: the waits before it took none.
    const job = await settled(queue, 'evt_1');
    expect([job.returnvalue, job.attemptsMade, calls]).toEqual(['processed', 1, 1]);
    expect(heard[0]).toEqual(['the test store is down', { operation: 'begin', id: 'evt_1' }]);
  });

  it("fails a job whose data enqueue did not write, and passes BullMQ's own options on", async () => {
    const { queue, start } = setUp(major);
    const worker = await start({ dedup: new TestDedupStore(), on: {}, concurrency: 3, name: 'billing' });
    expect(worker.opts).toMatchObject({ concurrency: 3, name: 'billing' });
    expect(Object.keys(worker.opts)).not.toContain('dedup');
    await queue.add('call.missed', { id: 'evt_1' } as never, { jobId: 'by-hand' });
    expect((await settled(queue, 'by-hand')).failedReason).toBe('svc-webhooks: this job was not added by enqueue(): its data is not { event, context } of one event');
  });
});

describe('createWorker options', () => {
  const valid = { connection: connectionTo('redis://127.0.0.1:6379'), dedup: new TestDedupStore(), on: {} };
  it.each([
    ['no queue name', () => createWorker('', valid), 'svc-webhooks: createWorker needs the name of the queue'],
    ['no options', () => createWorker('q', undefined as never), 'svc-webhooks: createWorker needs options with on, dedup and connection'],
    ['no on', () => createWorker('q', { ...valid, on: undefined as never }), 'svc-webhooks: createWorker needs on, an object of handlers by event type'],
    ['no dedup', () => createWorker('q', { ...valid, dedup: undefined as never }), 'svc-webhooks: createWorker needs dedup, a DedupStore (begin, complete, release and renew) with a key prefix of its own'],
    ['a dedup without renew', () => createWorker('q', { ...valid, dedup: { ...new TestDedupStore(), begin: async () => ({ state: 'done' as const }) } as never }), 'svc-webhooks: createWorker needs dedup, a DedupStore (begin, complete, release and renew) with a key prefix of its own'],
    ['a lease of 0', () => createWorker('q', { ...valid, leaseMs: 0 }), 'svc-webhooks: leaseMs must be a whole number of milliseconds from 1 to 2147483647'],
    ['maxClaimMs under leaseMs', () => createWorker('q', { ...valid, leaseMs: 5000, maxClaimMs: 1000 }), 'svc-webhooks: maxClaimMs must be at least leaseMs'],
    ['onStoreError that is no function', () => createWorker('q', { ...valid, onStoreError: 'log' as never }), 'svc-webhooks: onStoreError must be a function'],
    ['a handler that is no function', () => createWorker('q', { ...valid, on: { 'call.missed': 'x' as never } }), "svc-webhooks: on['call.missed'] must be a function"],
    ['bullmq without Worker', () => createWorker('q', { ...valid, bullmq: {} as never }), 'svc-webhooks: bullmq must hold the Worker and DelayedError classes of BullMQ'],
  ])('rejects %s with a TypeError', async (_name, create, message) => {
    await expect(create()).rejects.toThrow(new TypeError(message));
  });
});
