/**
 * work on the shared Postgres, on each pg-boss major under test: jobs queued
 * by enqueue, run by the typed handlers of on with the receiver's delivery, a
 * batch at once; what pg-boss then holds of each job: completed, retried, or
 * failed with its event, its output what its handler threw.
 */
import type pg from 'pg';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { WebhookDelivery } from '../../../src/core/delivery.js';
import type { WebhookEvent } from '../../../src/core/event.js';
import type { EventSchemas } from '../../../src/process/handler-types.js';
import type { StandardSchema } from '../../../src/process/standard-schema.js';
import { enqueue } from '../../../src/queues/pg-boss/enqueue.js';
import type { PgBossInstance } from '../../../src/queues/pg-boss/pg-boss-types.js';
import { work, type PgBossWorkerOptions } from '../../../src/queues/pg-boss/work.js';
import type { QueuedDelivery } from '../../../src/queues/queued-delivery.js';
import { PG_BOSS_MAJORS, type TestPgBoss } from '../../helpers/pg-boss-majors.js';
import { pgBossSuite } from '../../helpers/pg-boss-suite.js';
import { recordingLogger } from '../../helpers/recording-logger.js';
import { deliveryOf, type DeliverySpec } from '../../helpers/signed-request.js';
import { uniqueTable } from '../../helpers/postgres-clients.js';
import { WebhookOptionsError } from '../../../src/base/options-error.js';

describe.each(PG_BOSS_MAJORS)('on $name', (major) => {
  const suite = pgBossSuite(major);
  let pool: pg.Pool;
  let boss: TestPgBoss;
  let table: string;
  const workers: Array<{ queue: string; id: string }> = [];

  beforeAll(() => {
    ({ pool, boss, table } = suite);
  });

  afterEach(async () => {
    for (const { queue, id } of workers.splice(0)) await major.offWork(boss, queue, id);
  });

  /** A new queue, whose failed jobs are retried `retryLimit` times, `retryDelay` seconds after each failure. */
  async function newQueue(retryLimit = 0, retryDelay = 0): Promise<string> {
    const queue = uniqueTable('queue');
    await boss.createQueue(queue, { retryLimit, retryDelay });
    return queue;
  }

  /** The pg-boss instance with some of its methods replaced (one given as undefined is missing). */
  function bossWith(overrides: Partial<PgBossInstance>): PgBossInstance {
    return { send: boss.send.bind(boss), work: boss.work.bind(boss), complete: boss.complete.bind(boss), fail: boss.fail?.bind(boss), ...overrides };
  }

  /** The id of the event a job holds. */
  const eventIdOf = (job: { data: unknown }): string => (job.data as QueuedDelivery).delivery.id;

  /** The delivery of event `id` of `type`, as a receiver verified it, with more of its fields if given. */
  function deliveryIn(id: string, type = 'call.missed', spec: DeliverySpec = {}): WebhookDelivery {
    return deliveryOf({ ...spec, id, type });
  }

  /** Queues `deliveries` as a receiver would. */
  async function queueDeliveries(queue: string, deliveries: readonly WebhookDelivery[]): Promise<void> {
    const handoff = enqueue(boss, queue, { pool, table });
    for (const delivery of deliveries) await handoff.hand(delivery);
  }

  async function startWorker<S extends EventSchemas = {}>(queue: string, options: PgBossWorkerOptions<S>, instance: PgBossInstance = boss): Promise<void> {
    workers.push({ queue, id: await work(instance, queue, { ...options, worker: { pollingIntervalSeconds: 0.5, ...options.worker } }) });
  }

  /** Waits until every job of `queue` is in one of `states`; answers the jobs. */
  async function settled(queue: string, states: readonly string[] = ['completed', 'failed']): ReturnType<typeof suite.jobs> {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const jobs = await suite.jobs(queue);
      if (jobs.length > 0 && jobs.every((job) => states.includes(job.state))) return jobs;
      if (Date.now() > deadline) throw new Error(`jobs of ${queue} still unsettled: ${jobs.map((job) => job.state).join(', ')}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  describe('work', () => {
    it("runs the handler of each job's event type with the event and the receiver's delivery, and completes the job", async () => {
      const queue = await newQueue();
      const delivery = deliveryIn(`evt_${queue}`, 'transcript.ready', { keyId: 'k2', tenant: 'acme' });
      await queueDeliveries(queue, [delivery]);
      const calls: unknown[] = [];
      await startWorker(queue, {
        on: {
          'transcript.ready': async (received, given) => void calls.push([received, given]),
          'call.missed': () => void calls.push('wrong handler'),
        },
      });
      expect((await settled(queue)).map((job) => job.state)).toEqual(['completed']);
      expect(calls).toEqual([[delivery.event, deliveryOf({ id: `evt_${queue}`, type: 'transcript.ready', keyId: 'k2', tenant: 'acme' })]]);
    });

    it('completes jobs whose type has no handler, and unknown types by onUnknownEvent', async () => {
      const queue = await newQueue();
      const unknownDelivery = deliveryIn(`evt_b_${queue}`, 'something.new');
      await queueDeliveries(queue, [deliveryIn(`evt_a_${queue}`, 'message.received'), unknownDelivery]);
      const unknown: unknown[] = [];
      await startWorker(queue, { on: { 'call.missed': () => {} }, onUnknownEvent: (event, delivery) => void unknown.push([event.type, delivery]) });
      expect((await settled(queue)).map((job) => job.state)).toEqual(['completed', 'completed']);
      expect(unknown).toEqual([['something.new', unknownDelivery]]);
    });

    it("fails the job of an unknown type under unknownEvents: 'reject'", async () => {
      const queue = await newQueue();
      await queueDeliveries(queue, [deliveryIn(`evt_${queue}`, 'something.new')]);
      await startWorker(queue, { on: {}, unknownEvents: 'reject', onHandlerError: () => {} });
      const [job] = await settled(queue);
      expect(job!.state).toBe('failed');
      expect(JSON.stringify(job!.output)).toContain('unknown_event_type');
    });

    it("runs a batch's jobs at once: pg-boss's batchSize is passed on", async () => {
      const queue = await newQueue();
      await queueDeliveries(queue, Array.from({ length: 6 }, (_, index) => deliveryIn(`evt_${index}_${queue}`)));
      let running = 0;
      let most = 0;
      await startWorker(queue, {
        on: {
          'call.missed': async () => {
            most = Math.max(most, ++running);
            await new Promise((resolve) => setTimeout(resolve, 200));
            running -= 1;
          },
        },
        worker: { batchSize: 6 },
      });
      expect((await settled(queue)).every((job) => job.state === 'completed')).toBe(true);
      expect(most).toBe(6);
    });

    it("completes a batch's handled jobs and leaves only the failed one to pg-boss's retry", async () => {
      const queue = await newQueue(1);
      const events = Array.from({ length: 4 }, (_, index) => deliveryIn(`evt_${index}_${queue}`).event);
      await queueDeliveries(queue, events.map(({ id }) => deliveryIn(id)));
      const calls = new Map<string, number>();
      const heard: unknown[] = [];
      const failing = events[2]!.id;
      await startWorker(queue, {
        onHandlerError: (error, event) => void heard.push([(error as Error).message, event.id]),
        on: {
          'call.missed': async (event) => {
            const call = (calls.get(event.id) ?? 0) + 1;
            calls.set(event.id, call);
            if (event.id === failing && call === 1) throw new Error('the transcript service is down');
          },
        },
        worker: { batchSize: 4 },
      });
      expect((await settled(queue)).map((job) => job.state)).toEqual(['completed', 'completed', 'completed', 'completed']);
      expect(Object.fromEntries(calls)).toEqual(Object.fromEntries(events.map(({ id }) => [id, id === failing ? 2 : 1])));
      expect(heard).toEqual([['the transcript service is down', failing]]);
    });

    it("fails each of a batch's failed jobs with its own error, what its handler threw or the refusal, its handled jobs completed", async () => {
      const queue = await newQueue();
      const deliveries = [
        deliveryIn(`evt_0_${queue}`),
        deliveryIn(`evt_1_${queue}`, 'call.missed', { keyId: 'k2' }),
        deliveryIn(`evt_2_${queue}`, 'something.new'),
        deliveryIn(`evt_3_${queue}`, 'call.missed', { keyId: 'k3' }),
      ];
      await queueDeliveries(queue, deliveries);
      await startWorker(queue, {
        unknownEvents: 'reject',
        onHandlerError: () => {},
        on: {
          'call.missed': (_event, delivery) => {
            if (delivery.keyId !== '0') throw new RangeError(`the transcript service is down for ${delivery.keyId}`);
          },
        },
        worker: { batchSize: 4 },
      });
      const jobs = await settled(queue);
      expect(jobs.map((job) => job.state)).toEqual(['completed', 'failed', 'failed', 'failed']);
      expect(jobs.map((job) => job.output)).toEqual([
        null,
        expect.objectContaining({ name: 'RangeError', message: 'the transcript service is down for k2', stack: expect.stringMatching(/work\.test\.ts:\d+:\d+/) }),
        expect.objectContaining({ name: 'WebhookHandlerError', code: 'unknown_event_type', message: 'this receiver refuses event types it does not know' }),
        expect.objectContaining({ name: 'RangeError', message: 'the transcript service is down for k3' }),
      ]);
    });

    it("completes a batch's handled jobs when pg-boss refuses to fail a failed one, which pg-boss then fails itself", async () => {
      const queue = await newQueue();
      await queueDeliveries(queue, [deliveryIn(`evt_0_${queue}`), deliveryIn(`evt_1_${queue}`, 'call.missed', { keyId: 'k2' })]);
      const refused = new Error('the database refused the fail');
      const on = {
        'call.missed': (_event: unknown, delivery: WebhookDelivery) => {
          if (delivery.keyId === 'k2') throw new Error('the transcript service is down');
        },
      };
      await startWorker(queue, { on, onHandlerError: () => {}, worker: { batchSize: 2 } }, bossWith({ fail: () => Promise.reject(refused) }));
      const jobs = await settled(queue);
      expect(jobs.map((job) => job.state)).toEqual(['completed', 'failed']);
      expect(jobs[1]!.output).toMatchObject({ message: 'the database refused the fail' });
    });

    it("fails a batch's failed jobs together, with the first failed one's error, on an instance without fail, the batch's first job handled and completed", async () => {
      const queue = await newQueue();
      await queueDeliveries(queue, [0, 1, 2].map((index) => deliveryIn(`evt_${index}_${queue}`)));
      // pg-boss hands a batch's jobs in no set order: the job it hands first is the handled one.
      const batch: string[] = [];
      const withoutFail = bossWith({
        fail: undefined,
        work: (name, options, handler) =>
          boss.work(name, options, (jobs) => {
            batch.push(...jobs.map(eventIdOf));
            return handler(jobs);
          }),
      });
      const on = {
        'call.missed': (event: { id: string }) => {
          if (event.id !== batch[0]) throw new Error(`the transcript service is down for ${event.id}`);
        },
      };
      await startWorker(queue, { on, onHandlerError: () => {}, worker: { batchSize: 3 } }, withoutFail);
      const jobs = new Map((await settled(queue)).map((job) => [eventIdOf(job), job]));
      expect(batch).toHaveLength(3);
      const firstError = expect.objectContaining({ message: `the transcript service is down for ${batch[1]}` });
      expect(batch.map((id) => [jobs.get(id)!.state, jobs.get(id)!.output])).toEqual([
        ['completed', null],
        ['failed', firstError],
        ['failed', firstError],
      ]);
    });

    it("leaves a batch whose every job was handled for pg-boss to complete, so a refusal of the instance's complete fails none of them", async () => {
      const queue = await newQueue();
      await queueDeliveries(queue, [deliveryIn(`evt_0_${queue}`), deliveryIn(`evt_1_${queue}`)]);
      const calls: string[] = [];
      const refusing = bossWith({ complete: () => Promise.reject(new Error('the database refused the complete')) });
      await startWorker(queue, { on: { 'call.missed': (event) => void calls.push(event.id) }, worker: { batchSize: 2 } }, refusing);
      expect((await settled(queue)).map((job) => job.state)).toEqual(['completed', 'completed']);
      expect(calls.sort()).toEqual([`evt_0_${queue}`, `evt_1_${queue}`]);
    });

    it("keeps a failed job's own error as its output while it waits for its retry, after pg-boss has settled its batch", async () => {
      const queue = await newQueue(1, 3600);
      await queueDeliveries(queue, [deliveryIn(`evt_0_${queue}`), deliveryIn(`evt_1_${queue}`, 'call.missed', { keyId: 'k2' })]);
      await startWorker(queue, {
        onHandlerError: () => {},
        on: {
          'call.missed': (_event, delivery) => {
            if (delivery.keyId === 'k2') throw new RangeError('the transcript service is down');
          },
        },
        worker: { batchSize: 2 },
      });
      await settled(queue, ['completed', 'retry']);
      // pg-boss settles the batch just after: a batch that rejected would have its waiting job failed again, with the batch's error.
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const jobs = await suite.jobs(queue);
      expect(jobs.map((job) => job.state)).toEqual(['completed', 'retry']);
      expect(jobs[1]!.output).toMatchObject({ name: 'RangeError', message: 'the transcript service is down' });
    });

    it("logs what a handler threw on console.error when no onHandlerError is given, saying pg-boss retries its job", async () => {
      const queue = await newQueue();
      const delivery = deliveryIn(`evt_${queue}`);
      await queueDeliveries(queue, [delivery]);
      const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
      try {
        await startWorker(queue, {
          on: {
            'call.missed': () => {
              throw new TypeError('the transcript service is down');
            },
          },
        });
        expect((await settled(queue)).map((job) => job.state)).toEqual(['failed']);
        const [sentence, frame] = String(errors.mock.calls[0]?.[0]).split('\n');
        expect(errors).toHaveBeenCalledTimes(1);
        expect(sentence).toBe(
          `svc-webhooks: event ${JSON.stringify(delivery.event.id)} of type "call.missed": the handler failed (TypeError: the transcript service is down); pg-boss retries its job as the queue's retryLimit allows`,
        );
        expect(frame).toMatch(/^ {4}at .*work\.test\.ts:\d+:\d+\)?$/);
      } finally {
        errors.mockRestore();
      }
    });

    it('keeps a job out of retries in the failed state, its event intact, its output what the handler threw', async () => {
      const queue = await newQueue(1);
      const delivery = deliveryIn(`evt_${queue}`, 'call.missed', { keyId: 'k1' });
      const { event } = delivery;
      await queueDeliveries(queue, [delivery]);
      let calls = 0;
      await startWorker(queue, {
        onHandlerError: () => {},
        on: {
          'call.missed': () => {
            calls += 1;
            throw new Error(`the CRM refused ${event.id}`);
          },
        },
      });
      const [job] = await settled(queue, ['failed']);
      expect(calls).toBe(2);
      expect(job!.data).toEqual({ delivery: deliveryOf({ id: event.id, keyId: 'k1' }) });
      expect(job!.output).toMatchObject({ name: 'Error', message: `the CRM refused ${event.id}`, stack: expect.stringMatching(/^Error: the CRM refused .*\n\s+at .*work\.test\.ts:\d+:\d+/) });
      // It can be retried by hand once the cause is fixed.
      await boss.retry(queue, job!.id);
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect(calls).toBe(3);
    });

    it("fails the job of an event that fails its schema, and hands the handler the schema's output otherwise", async () => {
      const queue = await newQueue();
      const good = deliveryIn(`evt_good_${queue}`).event;
      // An envelope any receiver takes, whose amount the schema refuses.
      const bad = { ...deliveryIn(`evt_bad_${queue}`).event, data: { object: { id: 'obj_bad', amount: 'ten' } } } as WebhookEvent;
      await queueDeliveries(queue, [deliveryIn(good.id), { ...deliveryIn(bad.id), event: bad }]);
      const schema: StandardSchema<unknown, { tagged: string }> = {
        '~standard': {
          version: 1,
          vendor: 'test',
          validate: (value) => {
            const { id, amount } = (value as { data: { object: { id: string; amount?: unknown } } }).data.object;
            return amount === undefined ? { value: { tagged: id } } : { issues: [{ message: 'not allowed', path: ['data', 'object', 'amount'] }] };
          },
        },
      };
      const received: string[] = [];
      const heard: string[] = [];
      await startWorker(queue, {
        schemas: { 'call.missed': schema },
        onHandlerError: (error) => void heard.push((error as Error).message),
        on: { 'call.missed': (event) => void received.push(event.tagged) },
      });
      const jobs = await settled(queue);
      expect(jobs.map((job) => [eventIdOf(job), job.state])).toEqual([
        [good.id, 'completed'],
        [bad.id, 'failed'],
      ]);
      expect(received).toEqual([`obj_${good.id}`]);
      expect(heard).toEqual(['the event failed the schema for its type at $.data.object.amount']);
      expect(JSON.stringify(jobs[1]!.output)).toContain('invalid_event_data');
    });

    it('writes to its logger, with fields, a handler that threw and a job that holds no queued delivery, and nothing on console.error', async () => {
      const queue = await newQueue();
      const delivery = deliveryIn(`evt_${queue}`, 'call.missed', { keyId: 'k1' });
      await queueDeliveries(queue, [delivery]);
      const jobId = await boss.send(queue, { not: 'an event' });
      const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
      try {
        const { logger, lines } = recordingLogger();
        const broken = new TypeError('the transcript service is down');
        await startWorker(queue, {
          logger,
          on: {
            'call.missed': () => {
              throw broken;
            },
          },
        });
        expect((await settled(queue)).map((job) => job.state)).toEqual(['failed', 'failed']);
        expect([...lines].sort(([a], [b]) => a.localeCompare(b))).toEqual([
          ['error', { code: 'invalid_job', jobId }, `the pg-boss job ${jobId} holds no queued delivery (it was not sent by enqueue); it is failed`],
          [
            'warn',
            { code: 'handler_failed', id: delivery.event.id, type: 'call.missed', keyId: 'k1', errorClass: 'TypeError', errorMessage: 'the transcript service is down', err: broken },
            `event ${JSON.stringify(delivery.event.id)} of type "call.missed": the handler failed (TypeError: the transcript service is down); pg-boss retries its job as the queue's retryLimit allows`,
          ],
        ]);
        expect(errors).not.toHaveBeenCalled();
      } finally {
        errors.mockRestore();
      }
    });

    it('fails a job that holds no queued delivery, with one line on console.error', async () => {
      const queue = await newQueue();
      const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
      try {
        const jobId = await boss.send(queue, { not: 'an event' });
        await startWorker(queue, { on: { 'call.missed': () => {} } });
        const [job] = await settled(queue);
        expect(job!.state).toBe('failed');
        expect(errors.mock.calls).toEqual([
          [`svc-webhooks: the pg-boss job ${jobId} holds no queued delivery (it was not sent by enqueue); it is failed`],
        ]);
      } finally {
        errors.mockRestore();
      }
    });

    it('fails a job whose event has no data.object.id without running a handler, as a receiver refuses such an envelope', async () => {
      const queue = await newQueue();
      const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
      try {
        const delivery = deliveryIn(`evt_${queue}`);
        const jobId = await boss.send(queue, { delivery: { ...delivery, event: { ...delivery.event, data: { object: {} } } } });
        const calls: string[] = [];
        await startWorker(queue, { on: { 'call.missed': (received) => void calls.push(received.id) } });
        const [job] = await settled(queue);
        expect(job!.state).toBe('failed');
        expect(calls).toEqual([]);
        expect(job!.output).toMatchObject({ name: 'WebhookOptionsError', message: 'svc-webhooks: this job was not sent by enqueue(): its data is not { delivery } of one event' });
        expect(errors.mock.calls).toEqual([
          [`svc-webhooks: the pg-boss job ${jobId} holds no queued delivery (it was not sent by enqueue); it is failed`],
        ]);
      } finally {
        errors.mockRestore();
      }
    });

    it.each([
      ['no pg-boss', () => work({} as TestPgBoss, 'q', { on: {} }), 'svc-webhooks: work needs a pg-boss instance (new PgBoss(...)) as its first argument'],
      ['null for pg-boss', () => work(null as never, 'q', { on: {} }), 'svc-webhooks: work needs a pg-boss instance (new PgBoss(...)) as its first argument'],
      ['no queue name', () => work(boss, '', { on: {} }), 'svc-webhooks: work needs the name of a pg-boss queue'],
      ['a queue name that is no string', () => work(boss, 42 as never, { on: {} }), 'svc-webhooks: work needs the name of a pg-boss queue'],
      ['no options', () => work(boss, 'q', undefined as never), 'svc-webhooks: work needs options with on, an object of handlers by event type'],
      ['options that are null', () => work(boss, 'q', null as never), 'svc-webhooks: work options must be an object'],
      ['no on', () => work(boss, 'q', {} as never), 'svc-webhooks: work needs on, an object of handlers by event type'],
      ['the batchSize of rc.1 at the top level', () => work(boss, 'q', { on: {}, batchSize: 5 } as never), "svc-webhooks: the option batchSize is now worker.batchSize, with pg-boss's other work options"],
      ['worker options that are no object', () => work(boss, 'q', { on: {}, worker: 5 as never }), 'svc-webhooks: worker options must be an object'],
      ['a key that is no event type', () => work(boss, 'q', { on: { 'Call.Missed': () => {} } as never }), /not an event type/],
    ])('throws TypeError at once for %s', (_name, start, message) => {
      expect(start).toThrow(message instanceof RegExp ? message : new WebhookOptionsError(message));
      expect(start).toThrow(TypeError);
    });
  });
});
