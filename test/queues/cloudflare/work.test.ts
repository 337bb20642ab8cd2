/**
 * work() as a consumer Worker's queue handler, run here on hand-made
 * batches: each message claimed in the dedup store, acked or retried by
 * its outcome; the store taken from env when given as a function.
 */
import { tracingChannel } from 'node:diagnostics_channel';
import { afterEach, describe, expect, it } from 'vitest';
import { WebhookOptionsError } from '../../../src/base/options-error.js';
import type { WebhookEvent } from '../../../src/core/event.js';
import { JOB_CHANNEL, type JobTrace } from '../../../src/process/diagnostics.js';
import { work, type CloudflareWorkerOptions } from '../../../src/queues/cloudflare/work.js';
import { queuedDelivery } from '../../../src/queues/queued-delivery.js';
import { MemoryDedupStore } from '../../../src/stores/memory-dedup-store.js';
import type { DedupStore } from '../../../src/stores/dedup-store.js';
import { hearJobs, type HeardJobs } from '../../helpers/heard-traces.js';
import { batchOf, recordedMessage } from '../../helpers/queue-batch.js';
import { recordingLogger } from '../../helpers/recording-logger.js';
import { deliveryOf } from '../../helpers/signed-request.js';

const stores: MemoryDedupStore[] = [];
const unsubscribe: Array<() => void> = [];
afterEach(() => {
  for (const store of stores.splice(0)) store.close();
  for (const stop of unsubscribe.splice(0)) stop();
});

/** Calls `start` with each job's trace as its run starts on the job channel, until the test ends. */
function listenToJobs(start: (job: JobTrace) => void): void {
  const none = (): void => undefined;
  const channel = tracingChannel(JOB_CHANNEL);
  const events = { start: (job: unknown) => start(job as JobTrace), end: none, asyncStart: none, asyncEnd: none, error: none };
  channel.subscribe(events);
  unsubscribe.push(() => channel.unsubscribe(events));
}

function memoryStore(): MemoryDedupStore {
  const store = new MemoryDedupStore();
  stores.push(store);
  return store;
}

/** The message `enqueue` would have sent for event `id`. */
function messageOf(id: string, messageId = `m_${id}`) {
  return recordedMessage(messageId, JSON.parse(JSON.stringify(queuedDelivery(deliveryOf({ id })))));
}

/** A store whose every claim fails, as one that is down. */
function storeThatCannotClaim(): MemoryDedupStore {
  const store = memoryStore();
  store.begin = async () => {
    throw new Error('store down');
  };
  return store;
}

const quiet = { logger: recordingLogger().logger, onHandlerError: () => undefined };

describe('work: each message once through the dedup store', () => {
  it('runs the handler of the event type with the delivery, and acks the message', async () => {
    const seen: Array<[WebhookEvent, string]> = [];
    const handle = work({ on: { 'call.missed': (event, delivery) => void seen.push([event, delivery.dedupKey]) }, dedup: { store: memoryStore() } });
    const message = messageOf('evt_1');
    await handle(batchOf(message), {});
    expect(seen).toEqual([[deliveryOf({ id: 'evt_1' }).event, deliveryOf({ id: 'evt_1' }).dedupKey]]);
    expect(message.settled).toEqual(['ack']);
  });

  it('acks a copy of an event done before without running it again', async () => {
    let runs = 0;
    const handle = work({ on: { 'call.missed': () => void runs++ }, dedup: { store: memoryStore() } });
    const [first, copy] = [messageOf('evt_1', 'm_1'), messageOf('evt_1', 'm_2')];
    await handle(batchOf(first), {});
    await handle(batchOf(copy), {});
    expect(runs).toBe(1);
    expect([first.settled, copy.settled]).toEqual([['ack'], ['ack']]);
  });

  it('retries, after a quarter of the lease in whole seconds, a copy whose event another run holds; runs it once', async () => {
    let runs = 0;
    const handle = work({ on: { 'call.missed': async () => void runs++ }, dedup: { store: memoryStore(), leaseMs: 10_000 } });
    const [first, copy] = [messageOf('evt_1', 'm_1'), messageOf('evt_1', 'm_2')];
    await handle(batchOf(first, copy), {});
    expect(runs).toBe(1);
    expect([first.settled, copy.settled]).toEqual([['ack'], [{ retry: 3 }]]);
  });

  it('retries a message whose handler failed, without a delay of its own, and runs it again on its retry', async () => {
    let runs = 0;
    const { logger, lines } = recordingLogger();
    const handle = work({
      on: { 'call.missed': () => { if (++runs === 1) throw new Error('first run fails'); } },
      dedup: { store: memoryStore() },
      logger,
    });
    const [message, retried] = [messageOf('evt_1', 'm_1'), messageOf('evt_1', 'm_1')];
    await handle(batchOf(message), {});
    await handle(batchOf(retried), {});
    expect([message.settled, retried.settled, runs]).toEqual([[{ retry: undefined }], ['ack'], 2]);
    expect(lines.map(([level, fields, text]) => [level, fields.code, text])).toEqual([
      ['warn', 'handler_failed', expect.stringMatching(/; the queue retries its message as its max_retries allow$/)],
    ]);
  });

  it('retries, logging one error line, a message that is no queued delivery; runs nothing', async () => {
    let runs = 0;
    const { logger, lines } = recordingLogger();
    const handle = work({ on: { 'call.missed': () => void runs++ }, dedup: { store: memoryStore() }, logger });
    const message = recordedMessage('m_other', { event: { id: 'evt_1' } });
    await handle(batchOf(message), {});
    expect([message.settled, runs]).toEqual([[{ retry: undefined }], 0]);
    expect(lines).toEqual([
      [
        'error',
        expect.objectContaining({ code: 'invalid_job', jobId: 'm_other' }),
        'the queue message m_other holds no queued delivery (it was not sent by enqueue); it is retried, to end in the dead-letter queue',
      ],
    ]);
  });

  it('retries later, telling dedup.onError, a message whose store failed to claim', async () => {
    const told: string[] = [];
    const handle = work({ on: {}, dedup: { store: storeThatCannotClaim(), onError: (_error, { operation }) => void told.push(operation) }, ...quiet });
    const message = messageOf('evt_1');
    await handle(batchOf(message), {});
    expect([message.settled, told]).toEqual([[{ retry: 15 }], ['begin']]);
  });

  it('retries later a message whose store failed to claim, and without dedup.onError logs a line that says so', async () => {
    const { logger, lines } = recordingLogger();
    const handle = work({ on: {}, dedup: { store: storeThatCannotClaim() }, logger });
    const message = messageOf('evt_1');
    await handle(batchOf(message), {});
    expect(message.settled).toEqual([{ retry: 15 }]);
    expect(lines).toEqual([['warn', expect.objectContaining({ code: 'store_failed', operation: 'begin' }), expect.stringContaining('; the message is retried later.')]]);
  });

  it('takes the store from env for each batch when dedup.store is a function', async () => {
    const store = memoryStore();
    const envs: unknown[] = [];
    let runs = 0;
    const options: CloudflareWorkerOptions<{}, { STORE: DedupStore }> = {
      on: { 'call.missed': () => void runs++ },
      dedup: { store: (env) => (envs.push(env), env.STORE) },
    };
    const handle = work(options);
    const env = { STORE: store };
    await handle(batchOf(messageOf('evt_1', 'm_1')), env);
    await handle(batchOf(messageOf('evt_1', 'm_2')), env);
    expect([runs, envs]).toEqual([1, [env, env]]);
  });

  it('fails the batch, settling nothing, when dedup.store(env) answers no store', async () => {
    const handle = work({ on: {}, dedup: { store: () => ({}) as DedupStore } });
    const message = messageOf('evt_1');
    await expect(handle(batchOf(message), {})).rejects.toThrow(WebhookOptionsError);
    expect(message.settled).toEqual([]);
  });

  it("runs each message on the job channel as the cloudflare system on the batch's queue, the message id its job id", async () => {
    let heard: HeardJobs | undefined;
    const started: Array<Pick<JobTrace, 'system' | 'queue' | 'jobId'>> = [];
    try {
      heard = hearJobs();
      listenToJobs(({ system, queue, jobId }) => void started.push({ system, queue, jobId }));
      const handle = work({ on: { 'call.missed': () => undefined }, dedup: { store: memoryStore() } });
      await handle(batchOf(messageOf('evt_1', 'm_1'), messageOf('evt_1', 'm_2')), {});
      expect(Object.fromEntries(heard.outcomes)).toEqual({ m_1: ['processed'], m_2: ['postponed'] });
      expect(started).toEqual([
        { system: 'cloudflare', queue: 'webhooks', jobId: 'm_1' },
        { system: 'cloudflare', queue: 'webhooks', jobId: 'm_2' },
      ]);
    } finally {
      heard?.stop();
    }
  });

  it('retries, running nothing, a message whose run a job channel subscriber broke', async () => {
    listenToJobs((job) => {
      job.runWithin = () => {
        throw new Error('subscriber broke');
      };
    });
    let runs = 0;
    const handle = work({ on: { 'call.missed': () => void runs++ }, dedup: { store: memoryStore() } });
    const message = messageOf('evt_1');
    await handle(batchOf(message), {});
    expect([message.settled, runs]).toEqual([[{ retry: undefined }], 0]);
  });
});

describe('work: options', () => {
  it.each([
    ['no options', undefined, 'work needs options with on and dedup'],
    ['options that are no object', 'on', 'work options must be an object'],
    ['no on', { dedup: { store: new MemoryDedupStore() } }, 'work needs on, an object of handlers by event type'],
    ['a null on', { on: null, dedup: { store: new MemoryDedupStore() } }, 'work needs on, an object of handlers by event type'],
    ['no dedup', { on: {} }, 'dedup must be an object with the store ({ store, leaseMs, … })'],
    ['a store as dedup', { on: {}, dedup: new MemoryDedupStore() }, 'dedup'],
    ['a dedup.store that is no store', { on: {}, dedup: { store: {} } }, 'work needs dedup.store, a DedupStore (begin, complete, release and renew) or a function of env that makes one'],
    ['a lease under a millisecond', { on: {}, dedup: { store: new MemoryDedupStore(), leaseMs: 0 } }, 'leaseMs'],
    ['a maxClaimMs under leaseMs', { on: {}, dedup: { store: new MemoryDedupStore(), leaseMs: 5_000, maxClaimMs: 1_000 } }, 'maxClaimMs'],
    ['a logger without warn', { on: {}, dedup: { store: new MemoryDedupStore() }, logger: { error: () => undefined } }, 'logger'],
  ])('refuses %s, saying what it needs', (_what, options, message) => {
    expect(() => work(options as unknown as CloudflareWorkerOptions)).toThrow(WebhookOptionsError);
    expect(() => work(options as unknown as CloudflareWorkerOptions)).toThrow(message);
  });

  it('refuses a batch whose dedup.store(env) answers no store, saying what it must answer', async () => {
    const handle = work({ on: {}, dedup: { store: () => ({}) as DedupStore } });
    await expect(handle(batchOf(messageOf('evt_1')), {})).rejects.toThrow('dedup.store(env) must answer a DedupStore (begin, complete, release and renew)');
  });
});
