/**
 * work on the shared Postgres, on each pg-boss major under test: jobs queued
 * by enqueue, run by the typed handlers of on with the receiver's context, a
 * batch at once; what pg-boss then holds of each job: completed, retried, or
 * failed with its event.
 */
import type pg from 'pg';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { WebhookEvent } from '../../../src/core/event.js';
import { enqueue } from '../../../src/queues/pg-boss/enqueue.js';
import { work, type WorkOptions } from '../../../src/queues/pg-boss/work.js';
import type { QueuedEvent } from '../../../src/queues/queued-event.js';
import type { EventSchemas, HandlerContext } from '../../../src/receive/handler-types.js';
import type { StandardSchema } from '../../../src/receive/standard-schema.js';
import { PG_BOSS_MAJORS, type TestPgBoss } from '../../helpers/pg-boss-majors.js';
import { pgBossSuite } from '../../helpers/pg-boss-suite.js';
import { signedRequest } from '../../helpers/signed-request.js';
import { uniqueTable } from '../../postgres/clients.js';

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

  /** A new queue, whose failed jobs are retried `retryLimit` times at once. */
  async function newQueue(retryLimit = 0): Promise<string> {
    const queue = uniqueTable('queue');
    await boss.createQueue(queue, { retryLimit, retryDelay: 0 });
    return queue;
  }

  function eventOf(id: string, type = 'call.missed'): WebhookEvent {
    return JSON.parse(signedRequest({ id, type }).body) as WebhookEvent;
  }

  /** Queues `events` as a receiver would, each with `context` (its id filled in). */
  async function queueEvents(queue: string, events: readonly WebhookEvent[], context: Partial<HandlerContext> = {}): Promise<void> {
    const handoff = enqueue(boss, queue, { pool, table });
    for (const event of events) await handoff.hand(event, { ...context, id: event.id });
  }

  async function startWorker<S extends EventSchemas = {}>(queue: string, options: WorkOptions<S>): Promise<void> {
    workers.push({ queue, id: await work(boss, queue, { pollingIntervalSeconds: 0.5, ...options }) });
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
    it("runs the handler of each job's event type with the event and the receiver's context, and completes the job", async () => {
      const queue = await newQueue();
      const event = eventOf(`evt_${queue}`, 'transcript.ready');
      await queueEvents(queue, [event], { keyId: 'k2', tenant: 'acme' });
      const calls: unknown[] = [];
      await startWorker(queue, {
        on: {
          'transcript.ready': async (received, context) => void calls.push([received, context]),
          'call.missed': () => void calls.push('wrong handler'),
        },
      });
      expect((await settled(queue)).map((job) => job.state)).toEqual(['completed']);
      expect(calls).toEqual([[event, { id: event.id, keyId: 'k2', tenant: 'acme' }]]);
    });

    it('completes jobs whose type has no handler, and unknown types by onUnknown', async () => {
      const queue = await newQueue();
      await queueEvents(queue, [eventOf(`evt_a_${queue}`, 'message.received'), eventOf(`evt_b_${queue}`, 'something.new')]);
      const unknown: string[] = [];
      await startWorker(queue, { on: { 'call.missed': () => {} }, onUnknown: (event) => void unknown.push(event.type) });
      expect((await settled(queue)).map((job) => job.state)).toEqual(['completed', 'completed']);
      expect(unknown).toEqual(['something.new']);
    });

    it("runs a batch's jobs at once: pg-boss's batchSize is passed on", async () => {
      const queue = await newQueue();
      await queueEvents(queue, Array.from({ length: 6 }, (_, index) => eventOf(`evt_${index}_${queue}`)));
      let running = 0;
      let most = 0;
      await startWorker(queue, {
        batchSize: 6,
        on: {
          'call.missed': async () => {
            most = Math.max(most, ++running);
            await new Promise((resolve) => setTimeout(resolve, 200));
            running -= 1;
          },
        },
      });
      expect((await settled(queue)).every((job) => job.state === 'completed')).toBe(true);
      expect(most).toBe(6);
    });

    it("completes a batch's handled jobs and leaves only the failed one to pg-boss's retry", async () => {
      const queue = await newQueue(1);
      const events = Array.from({ length: 4 }, (_, index) => eventOf(`evt_${index}_${queue}`));
      await queueEvents(queue, events);
      const calls = new Map<string, number>();
      const heard: unknown[] = [];
      const failing = events[2]!.id;
      await startWorker(queue, {
        batchSize: 4,
        onHandlerError: (error, event) => void heard.push([(error as Error).message, event.id]),
        on: {
          'call.missed': async (event) => {
            const call = (calls.get(event.id) ?? 0) + 1;
            calls.set(event.id, call);
            if (event.id === failing && call === 1) throw new Error('the transcript service is down');
          },
        },
      });
      expect((await settled(queue)).map((job) => job.state)).toEqual(['completed', 'completed', 'completed', 'completed']);
      expect(Object.fromEntries(calls)).toEqual(Object.fromEntries(events.map(({ id }) => [id, id === failing ? 2 : 1])));
      expect(heard).toEqual([['the transcript service is down', failing]]);
    });

    it('keeps a job out of retries in the failed state, its event intact, its output the error code and never what the handler threw', async () => {
      const queue = await newQueue(1);
      const event = eventOf(`evt_${queue}`);
      await queueEvents(queue, [event], { keyId: 'k1' });
      let calls = 0;
      await startWorker(queue, {
        onHandlerError: () => {},
        on: {
          'call.missed': () => {
            calls += 1;
            throw new Error(`secret sk_live_123 and ${JSON.stringify(event)}`);
          },
        },
      });
      const [job] = await settled(queue, ['failed']);
      expect(calls).toBe(2);
      expect(job!.data).toEqual({ event, context: { id: event.id, keyId: 'k1' } });
      const output = JSON.stringify(job!.output);
      expect(output).toContain('handler_failed');
      expect(output).not.toContain('sk_live_123');
      expect(output).not.toContain(event.id);
      // It can be retried by hand once the cause is fixed.
      await boss.retry(queue, job!.id);
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect(calls).toBe(3);
    });

    it("fails the job of an event that fails its schema, and hands the handler the schema's output otherwise", async () => {
      const queue = await newQueue();
      const good = eventOf(`evt_good_${queue}`);
      const bad = { ...eventOf(`evt_bad_${queue}`), data: { object: { id: 42 } } } as unknown as WebhookEvent;
      await queueEvents(queue, [good, bad]);
      const schema: StandardSchema<unknown, { tagged: string }> = {
        '~standard': {
          version: 1,
          vendor: 'test',
          validate: (value) => {
            const id = (value as { data: { object: { id: unknown } } }).data.object.id;
            return typeof id === 'string' ? { value: { tagged: id } } : { issues: [{ message: 'not a string', path: ['data', 'object', 'id'] }] };
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
      expect(jobs.map((job) => [(job.data as QueuedEvent).context.id, job.state])).toEqual([
        [good.id, 'completed'],
        [bad.id, 'failed'],
      ]);
      expect(received).toEqual([`obj_${good.id}`]);
      expect(heard).toEqual(['the event failed the schema for its type at $.data.object.id']);
      expect(JSON.stringify(jobs[1]!.output)).toContain('invalid_event_data');
    });

    it('fails a job that holds no queued event, with one line on console.error', async () => {
      const queue = await newQueue();
      const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
      try {
        const jobId = await boss.send(queue, { not: 'an event' });
        await startWorker(queue, { on: { 'call.missed': () => {} } });
        const [job] = await settled(queue);
        expect(job!.state).toBe('failed');
        expect(errors.mock.calls).toEqual([
          [`svc-webhooks: the pg-boss job ${jobId} holds no queued event (it was not sent by enqueue); it is failed`],
        ]);
      } finally {
        errors.mockRestore();
      }
    });

    it.each([
      ['no pg-boss', () => work({} as TestPgBoss, 'q', { on: {} }), 'svc-webhooks: work needs a pg-boss instance (new PgBoss(...)) as its first argument'],
      ['no queue name', () => work(boss, '', { on: {} }), 'svc-webhooks: work needs the name of a pg-boss queue'],
      ['no options', () => work(boss, 'q', undefined as never), 'svc-webhooks: work options must be an object'],
      ['no on', () => work(boss, 'q', {} as never), 'svc-webhooks: work needs on, an object of handlers by event type'],
      ['a misspelled type', () => work(boss, 'q', { on: { 'call.mised': () => {} } as never }), /not a known event type/],
    ])('throws TypeError at once for %s', (_name, start, message) => {
      expect(start).toThrow(message instanceof RegExp ? message : new TypeError(message));
      expect(start).toThrow(TypeError);
    });
  });
});
