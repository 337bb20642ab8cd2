/**
 * `work()` with `ordering`: where a handed-off event is applied, the
 * messages of one object run one at a time and never one older than a
 * version of its object processed before. On hand-made batches here, then
 * in workerd on one D1 database, fed by the Fetch entry and `enqueue`.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { WebhookOptionsError } from '../../../src/base/options-error.js';
import type { WebhookEvent } from '../../../src/core/event.js';
import { work } from '../../../src/queues/cloudflare/work.js';
import { queuedDelivery } from '../../../src/queues/queued-delivery.js';
import { MemoryDedupStore } from '../../../src/stores/memory-dedup-store.js';
import { cloudflareDeployment, type CloudflareDeployment } from '../../helpers/cloudflare-queues.js';
import { hearJobs } from '../../helpers/heard-traces.js';
import { BY_TIMESTAMP } from '../../helpers/ordering-contract.js';
import { batchOf, recordedMessage } from '../../helpers/queue-batch.js';
import { deliveryOfEvent } from '../../helpers/signed-request.js';
import { TestDedupStore } from '../../helpers/test-dedup-store.js';
import { until } from '../../helpers/until.js';

const WAIT_MS = 30_000;

/** The time version `version` of an object happened: seconds into an hour, as RFC 3339. */
const at = (version: number): string => new Date(Date.UTC(2026, 10, 29, 12, 0, version)).toISOString();

describe('work with ordering, on hand-made batches', () => {
  const stores: MemoryDedupStore[] = [];
  afterEach(() => {
    for (const store of stores.splice(0)) store.close();
  });
  const memoryStore = (): MemoryDedupStore => {
    const store = new MemoryDedupStore();
    stores.push(store);
    return store;
  };

  /** The message `enqueue` would have sent for version `version` of `object`. */
  function versionMessage(version: number, object = 'msg_1') {
    const id = `evt_${object}_v${version}`;
    const event = { id, type: 'message.received', timestamp: at(version), data: { object: { id: object } } } as WebhookEvent;
    return recordedMessage(`m_${id}`, JSON.parse(JSON.stringify(queuedDelivery(deliveryOfEvent(event)))));
  }

  it('runs one message of an object at a time, retrying the other later, and acks a stale one without running it', async () => {
    const ran: string[] = [];
    const handle = work({ on: { 'message.received': (event) => void ran.push(event.id) }, dedup: { store: memoryStore(), leaseMs: 10_000 }, ordering: BY_TIMESTAMP });
    const [v2, v3, other] = [versionMessage(2), versionMessage(3), versionMessage(1, 'msg_2')];
    await handle(batchOf(v2, v3, other), {});
    expect([v2.settled, v3.settled, other.settled]).toEqual([['ack'], [{ retry: 3 }], ['ack']]);
    const [v1, v3again] = [versionMessage(1), versionMessage(3)];
    await handle(batchOf(v1), {});
    await handle(batchOf(v3again), {});
    expect([v1.settled, v3again.settled]).toEqual([['ack'], ['ack']]);
    expect(ran).toEqual(['evt_msg_1_v2', 'evt_msg_2_v1', 'evt_msg_1_v3']);
  });

  it("runs a stale message marked delivery.stale under staleEvents: 'run'", async () => {
    const ran: Array<[string, boolean | undefined]> = [];
    const handle = work({ on: { 'message.received': (event, delivery) => void ran.push([event.id, delivery.stale]) }, dedup: { store: memoryStore() }, ordering: { ...BY_TIMESTAMP, staleEvents: 'run' } });
    await handle(batchOf(versionMessage(4)), {});
    await handle(batchOf(versionMessage(2)), {});
    expect(ran).toEqual([['evt_msg_1_v4', undefined], ['evt_msg_1_v2', true]]);
  });

  it('acks a copy of a skipped stale message as done before, and tells the job channel how each ended', async () => {
    const heard = hearJobs();
    try {
      const ran: string[] = [];
      const handle = work({ on: { 'message.received': (event) => void ran.push(event.id) }, dedup: { store: memoryStore() }, ordering: BY_TIMESTAMP });
      const [v4, v2, v2Again] = [versionMessage(4), versionMessage(2), versionMessage(2)];
      for (const message of [v4, v2, v2Again]) await handle(batchOf(message), {});
      expect([v4.settled, v2.settled, v2Again.settled]).toEqual([['ack'], ['ack'], ['ack']]);
      expect(ran).toEqual(['evt_msg_1_v4']);
      expect(Object.fromEntries(heard.outcomes)).toEqual({ m_evt_msg_1_v4: ['processed'], m_evt_msg_1_v2: ['stale', 'duplicate'] });
    } finally {
      heard.stop();
    }
  });

  it("runs a stale message marked delivery.stale under staleEvents: 'run' while the job channel is heard too", async () => {
    const heard = hearJobs();
    try {
      const ran: Array<[string, boolean | undefined]> = [];
      const handle = work({ on: { 'message.received': (event, delivery) => void ran.push([event.id, delivery.stale]) }, dedup: { store: memoryStore() }, ordering: { ...BY_TIMESTAMP, staleEvents: 'run' } });
      for (const version of [4, 2]) await handle(batchOf(versionMessage(version)), {});
      expect(ran).toEqual([['evt_msg_1_v4', undefined], ['evt_msg_1_v2', true]]);
    } finally {
      heard.stop();
    }
  });

  it('retries a message whose order cannot be read, running nothing, as a failed one', async () => {
    const heard = hearJobs();
    try {
      const ran: string[] = [];
      const unreadable = { version: () => 'not a time' };
      const handle = work({ on: { 'message.received': (event) => void ran.push(event.id) }, dedup: { store: memoryStore() }, ordering: unreadable });
      const message = versionMessage(1);
      await handle(batchOf(message), {});
      // Retried after the queue's own delay, as a failed handler's message is.
      expect(message.settled).toEqual([{ retry: undefined }]);
      expect(ran).toEqual([]);
      expect(heard.outcomes.get('m_evt_msg_1_v1')).toEqual(['failed']);
    } finally {
      heard.stop();
    }
  });

  it('refuses, at creation, a dedup store that cannot order, naming what it lacks, and ordering without a version', () => {
    expect(() => work({ on: {}, dedup: { store: new TestDedupStore() }, ordering: BY_TIMESTAMP })).toThrow(
      new WebhookOptionsError('svc-webhooks: ordering needs a dedup store that orders events (an OrderingDedupStore); this one lacks beginInOrder, completeInOrder, releaseInOrder, renewInOrder'),
    );
    expect(() => work({ on: {}, dedup: { store: memoryStore() }, ordering: {} as never })).toThrow(/^svc-webhooks: ordering.version is required/);
  });

  it('fails the batch, settling nothing, when dedup.store(env) answers a store that cannot order', async () => {
    const handle = work({ on: {}, dedup: { store: () => new TestDedupStore() }, ordering: BY_TIMESTAMP });
    const message = versionMessage(1);
    await expect(handle(batchOf(message), {})).rejects.toThrow(/^svc-webhooks: ordering needs a dedup store that orders events/);
    expect(message.settled).toEqual([]);
  });
});

describe('work with ordering in workerd, on a D1DedupStore', () => {
  let deployment: CloudflareDeployment | undefined;
  beforeAll(async () => {
    deployment = await cloudflareDeployment('none', 'ordered');
  }, 60_000);
  afterAll(() => deployment?.close());

  /** Waits until the consumer acked `acks` more messages than `before`. */
  async function acked(before: number, acks: number): Promise<void> {
    await until(async () => (await deployment!.settled()).ack >= before + acks, WAIT_MS);
  }

  /** Sends version `version` of `object` as event `id`, and waits until its message is acked. */
  async function sendAcked(id: string, object: string, version: number): Promise<void> {
    const { ack } = await deployment!.settled();
    expect(await deployment!.send(id, { object, timestamp: at(version) })).toBe(202);
    await acked(ack, 1);
  }

  /** The handler's steps for the events whose ids start with `prefix`. */
  const stepsOf = async (prefix: string): Promise<string[]> => (await deployment!.steps()).filter((step) => step.split(':')[1]!.startsWith(prefix));

  it('runs the events of an object that arrive in order, each once, in order', async () => {
    for (const version of [1, 2, 3]) await sendAcked(`evt_inorder_v${version}`, 'msg_inorder', version);
    expect(await stepsOf('evt_inorder_')).toEqual(['began:evt_inorder_v1', 'ran:evt_inorder_v1', 'began:evt_inorder_v2', 'ran:evt_inorder_v2', 'began:evt_inorder_v3', 'ran:evt_inorder_v3']);
  }, 40_000);

  it('acks an event older than one of its object processed before without running its handler', async () => {
    const { retry, wait } = await deployment!.settled();
    await sendAcked('evt_reversed_v2', 'msg_reversed', 2);
    await sendAcked('evt_reversed_v1', 'msg_reversed', 1);
    expect(await stepsOf('evt_reversed_')).toEqual(['began:evt_reversed_v2', 'ran:evt_reversed_v2']);
    expect(await deployment!.settled()).toMatchObject({ retry, wait });
  }, 40_000);

  it('records no version for a failed run: an older event runs after it, and the failed one succeeds on its retry', async () => {
    const before = await deployment!.settled();
    // Version 5 fails until version 3 has run: had its failure recorded 5, version 3 would be stale, and neither would run.
    expect(await deployment!.send('evt_failed_v5_after_evt_failed_v3', { object: 'msg_failed', timestamp: at(5) })).toBe(202);
    await until(async () => (await deployment!.settled()).retry > before.retry, WAIT_MS);
    expect(await deployment!.send('evt_failed_v3', { object: 'msg_failed', timestamp: at(3) })).toBe(202);
    await acked(before.ack, 2);
    const ran = (await stepsOf('evt_failed_')).filter((step) => step.startsWith('ran:'));
    expect(ran).toEqual(['ran:evt_failed_v3', 'ran:evt_failed_v5_after_evt_failed_v3']);
  }, 40_000);

  it('runs two events of one object taken in one batch one after the other: one waits while the other runs', async () => {
    const before = await deployment!.settled();
    await deployment!.queueAtOnce([
      { id: 'evt_both_v1', object: 'msg_both', timestamp: at(1) },
      { id: 'evt_both_v2', object: 'msg_both', timestamp: at(2) },
    ]);
    await acked(before.ack, 2);
    expect((await deployment!.settled()).wait - before.wait).toBe(1);
    // Whichever claimed the object first ran alone; the other ran after it ended, or, older, was acked as stale.
    expect([
      ['began:evt_both_v1', 'ran:evt_both_v1', 'began:evt_both_v2', 'ran:evt_both_v2'],
      ['began:evt_both_v2', 'ran:evt_both_v2'],
    ]).toContainEqual(await stepsOf('evt_both_'));
  }, 40_000);
});
