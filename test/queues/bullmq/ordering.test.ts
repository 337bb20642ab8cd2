/**
 * `work` with `ordering`, on a real Redis: where a handed-off event is
 * applied, the jobs of one object run one at a time and never one older
 * than a version of its object processed before, whatever order the queue
 * runs them in.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { enqueue, jobIdOf, work, type BullMQWorker } from '../../../src/queues/bullmq/index.js';
import type { WebhookDelivery, WebhookEvent } from '../../../src/index.js';
import { MemoryDedupStore } from '../../../src/stores/memory-dedup-store.js';
import { redisUrl } from '../../helpers/redis-clients.js';
import { BULLMQ_MAJORS, connectionTo, dropQueue, uniqueQueueName, type BullMQMajor, type TestQueue } from '../../helpers/bullmq-majors.js';
import { BY_TIMESTAMP } from '../../helpers/ordering-contract.js';
import { deliveryOfEvent } from '../../helpers/signed-request.js';
import { TestDedupStore } from '../../helpers/test-dedup-store.js';
import { WebhookOptionsError } from '../../../src/base/options-error.js';
import type { OrderingOptions } from '../../../src/index.js';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The delivery of version `version` (seconds into the hour) of `object`. */
function versionDelivery(version: number, object = 'msg_1'): WebhookDelivery {
  const id = `evt_${object}_v${version}`;
  const event = { id, type: 'message.received', timestamp: new Date(Date.UTC(2026, 10, 29, 12, 0, version)).toISOString(), data: { object: { id: object } } } as WebhookEvent;
  return deliveryOfEvent(event);
}

const versionOf = (event: WebhookEvent): number => new Date(event.timestamp as string).getUTCSeconds();

/** A queue, a worker with `ordering` on it, and the versions its handler ran, in order. */
async function orderedWorker(major: BullMQMajor, ordering: OrderingOptions, concurrency = 1, holdMs = 0) {
  const queue: TestQueue = major.queue(uniqueQueueName('ordering'), redisUrl());
  cleanups.push(() => dropQueue(queue));
  const ran: Array<{ version: number; stale?: boolean }> = [];
  const worker: BullMQWorker = await work(queue.name, {
    bullmq: major.classes,
    dedup: { store: new MemoryDedupStore(), leaseMs: 2_000 },
    ordering,
    on: {
      'message.received': async (event, delivery) => {
        ran.push(delivery.stale === true ? { version: versionOf(event), stale: true } : { version: versionOf(event) });
        if (holdMs > 0) await new Promise((resolve) => setTimeout(resolve, holdMs));
      },
    },
    worker: { connection: connectionTo(redisUrl()), concurrency },
  });
  worker.on('error', () => {});
  cleanups.push(() => worker.close());
  return { queue, ran, handoff: enqueue(queue) };
}

/** The job of `delivery` once completed, with its return value. */
async function completed(queue: TestQueue, delivery: WebhookDelivery): Promise<unknown> {
  return vi.waitFor(
    async () => {
      const job = await queue.getJob(jobIdOf(delivery.dedupKey));
      expect(await job?.getState()).toBe('completed');
      // Read once completed: a job read before holds the fields it had then.
      return (await queue.getJob(jobIdOf(delivery.dedupKey)))!.returnvalue;
    },
    { timeout: 15_000, interval: 50 },
  );
}

describe.each(BULLMQ_MAJORS)('work with ordering on $name', (major) => {
  it("completes a job older than its object's processed version as 'stale', without running its handler", async () => {
    const { queue, ran, handoff } = await orderedWorker(major, BY_TIMESTAMP);
    const results: unknown[] = [];
    for (const version of [3, 1, 5, 2]) {
      await handoff.hand(versionDelivery(version));
      results.push(await completed(queue, versionDelivery(version)));
    }
    expect(results).toEqual(['processed', 'stale', 'processed', 'stale']);
    expect(ran).toEqual([{ version: 3 }, { version: 5 }]);
  });

  it("runs a stale job marked delivery.stale under staleEvents: 'run'", async () => {
    const { queue, ran, handoff } = await orderedWorker(major, { ...BY_TIMESTAMP, staleEvents: 'run' });
    for (const version of [4, 2]) {
      await handoff.hand(versionDelivery(version));
      expect(await completed(queue, versionDelivery(version))).toBe('processed');
    }
    expect(ran).toEqual([{ version: 4 }, { version: 2, stale: true }]);
  });

  it('runs two jobs of one object one at a time, the second waiting in the delayed set, while another object runs beside', async () => {
    const { queue, ran, handoff } = await orderedWorker(major, BY_TIMESTAMP, 3, 400);
    const deliveries = [versionDelivery(1), versionDelivery(2), versionDelivery(1, 'msg_2')];
    await Promise.all(deliveries.map((delivery) => handoff.hand(delivery)));
    for (const delivery of deliveries) expect(await completed(queue, delivery)).toBe('processed');
    expect(ran.map(({ version }) => version).sort()).toEqual([1, 1, 2]);
    // Version 2 of msg_1 ran after version 1 had ended: it never saw it running.
    expect(ran.findIndex(({ version }) => version === 2)).toBe(2);
  });
});

describe('work with ordering: options', () => {
  it('refuses a dedup store that cannot order, naming what it lacks', async () => {
    await expect(
      work('orders', { dedup: { store: new TestDedupStore() }, ordering: BY_TIMESTAMP, on: {}, worker: { connection: {} } } as never),
    ).rejects.toThrow(new WebhookOptionsError('svc-webhooks: ordering needs a dedup store that orders events (an OrderingDedupStore); this one lacks beginInOrder, completeInOrder, releaseInOrder, renewInOrder'));
  });
});
