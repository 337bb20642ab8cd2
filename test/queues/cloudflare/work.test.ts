/**
 * work() as a consumer Worker's queue handler, run here on hand-made
 * batches: each message claimed in the dedup store, acked or retried by
 * its outcome; the store taken from env when given as a function.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { WebhookOptionsError } from '../../../src/base/options-error.js';
import type { WebhookEvent } from '../../../src/core/event.js';
import { work, type CloudflareWorkerOptions } from '../../../src/queues/cloudflare/work.js';
import { queuedDelivery } from '../../../src/queues/queued-delivery.js';
import { MemoryDedupStore } from '../../../src/stores/memory-dedup-store.js';
import type { DedupStore } from '../../../src/stores/dedup-store.js';
import { hearJobs, type HeardJobs } from '../../helpers/heard-traces.js';
import { batchOf, recordedMessage } from '../../helpers/queue-batch.js';
import { recordingLogger } from '../../helpers/recording-logger.js';
import { deliveryOf } from '../../helpers/signed-request.js';

const stores: MemoryDedupStore[] = [];
afterEach(() => {
  for (const store of stores.splice(0)) store.close();
});

function memoryStore(): MemoryDedupStore {
  const store = new MemoryDedupStore();
  stores.push(store);
  return store;
}

/** The message `enqueue` would have sent for event `id`. */
function messageOf(id: string, messageId = `m_${id}`) {
  return recordedMessage(messageId, JSON.parse(JSON.stringify(queuedDelivery(deliveryOf({ id })))));
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
    expect(lines.map(([level, fields]) => [level, fields.code])).toEqual([['warn', 'handler_failed']]);
  });

  it('retries, logging one error line, a message that is no queued delivery; runs nothing', async () => {
    let runs = 0;
    const { logger, lines } = recordingLogger();
    const handle = work({ on: { 'call.missed': () => void runs++ }, dedup: { store: memoryStore() }, logger });
    const message = recordedMessage('m_other', { event: { id: 'evt_1' } });
    await handle(batchOf(message), {});
    expect([message.settled, runs]).toEqual([[{ retry: undefined }], 0]);
    expect(lines.map(([level, fields]) => [level, fields.code, fields.jobId])).toEqual([['error', 'invalid_job', 'm_other']]);
  });

  it('retries later, telling dedup.onError, a message whose store failed to claim', async () => {
    const failing = memoryStore();
    failing.begin = async () => {
      throw new Error('store down');
    };
    const told: string[] = [];
    const handle = work({ on: {}, dedup: { store: failing, onError: (_error, { operation }) => void told.push(operation) }, ...quiet });
    const message = messageOf('evt_1');
    await handle(batchOf(message), {});
    expect([message.settled, told]).toEqual([[{ retry: 15 }], ['begin']]);
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

  it('runs each message on the job channel as the cloudflare system, the message id its job id', async () => {
    let heard: HeardJobs | undefined;
    try {
      heard = hearJobs();
      const handle = work({ on: { 'call.missed': () => undefined }, dedup: { store: memoryStore() } });
      await handle(batchOf(messageOf('evt_1', 'm_1'), messageOf('evt_1', 'm_2')), {});
      expect(Object.fromEntries(heard.outcomes)).toEqual({ m_1: ['processed'], m_2: ['postponed'] });
    } finally {
      heard?.stop();
    }
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
