/**
 * `WebhooksModule.forWorker` over HTTP and a real queue, on both BullMQ
 * majors (Redis) and each pg-boss major this Node loads (Postgres): a Nest
 * app receives with `handoff`, its `@OnWebhook` methods left to the worker;
 * a Nest worker app runs those methods, with the service they inject, once
 * per event; the options of `on` reach the worker; the worker's line in the
 * app's log; shutdown stops the worker; and the bootstraps that fail, naming the fix.
 */
import 'reflect-metadata';
import { Inject, Injectable, Module, type DynamicModule, type INestApplication, type INestApplicationContext, type LoggerService, type Provider } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { OnWebhook, WebhooksModule, WebhooksRoute, WebhooksWorker, type WebhooksModuleBullMQQueue, type WebhooksModulePgBoss, type WebhooksModuleWorkerOptions } from '../../adapters/nestjs.js';
import { enqueue as enqueueOnBullMQ, jobIdOf } from '../../src/queues/bullmq/index.js';
import { enqueue as enqueueOnPgBoss } from '../../src/queues/pg-boss/index.js';
import { migrateProcessedEvents } from '../../src/stores/postgres/index.js';
import type { CallMissedEvent, MessageReceivedEvent, WebhookDelivery } from '../../src/index.js';
import { BULLMQ_MAJORS, connectionTo, dropQueue, uniqueQueueName, type TestQueue } from '../helpers/bullmq-majors.js';
import { freePort } from '../helpers/free-port.js';
import { recordingNestLogger } from '../helpers/nest-logs.js';
import { PG_BOSS_MAJORS } from '../helpers/pg-boss-majors.js';
import { pgBossSuite } from '../helpers/pg-boss-suite.js';
import { uniqueTable } from '../helpers/postgres-clients.js';
import { redisUrl } from '../helpers/redis-clients.js';
import { keyOf, SECRET, now, signedRequest, type SignedRequest } from '../helpers/signed-request.js';
import { TestDedupStore } from '../helpers/test-dedup-store.js';

/** A service of the app, which the decorated methods inject: what they ran, and which events throw once. */
@Injectable()
class CallLog {
  readonly seen: string[] = [];
  readonly failOnce = new Set<string>();
}

@Injectable()
class Callbacks {
  constructor(@Inject(CallLog) private readonly log: CallLog) {}

  @OnWebhook('call.missed')
  async missed(event: CallMissedEvent, delivery: WebhookDelivery): Promise<void> {
    this.log.seen.push(`${event.type} ${delivery.id}`);
    if (this.log.failOnce.delete(delivery.id)) throw new Error('the database is down');
  }

  @OnWebhook('message.received')
  received(event: MessageReceivedEvent, { id }: WebhookDelivery): void {
    this.log.seen.push(`${event.type} ${id}`);
  }
}

/** The feature module both sides import: the receiving app has the methods too, and leaves them to the worker. */
@Module({ providers: [CallLog, Callbacks], exports: [CallLog] })
class CallsModule {}

const closing: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

/** A receiving app of `webhooks` and the methods, listening on 127.0.0.1; answers how to post to its route. */
async function receiver(webhooks: DynamicModule): Promise<(request: SignedRequest) => Promise<number>> {
  @Module({ imports: [webhooks, CallsModule] })
  class ReceiverModule {}
  const app = await NestFactory.create(ReceiverModule, { rawBody: true, logger: false, abortOnError: false });
  closing.push(() => app.close());
  await app.listen(0, '127.0.0.1');
  const url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  return async ({ body, headers }) => (await fetch(`${url}/webhooks`, { method: 'POST', body, headers })).status;
}

/** A worker app of `webhooks` and the methods, an application context as a worker process has; closed after the test unless it was. */
async function workerApp(webhooks: DynamicModule, logger: LoggerService | false = false, providers: Provider[] = []): Promise<INestApplicationContext> {
  @Module({ imports: [webhooks, CallsModule], providers })
  class WorkerModule {}
  const app = await NestFactory.createApplicationContext(WorkerModule, { logger, abortOnError: false });
  closing.push(() => app.close());
  return app;
}

/** The error an app of `imports` and `providers` fails its bootstrap with, an HTTP app if `http`; answers its message. */
async function bootstrapError(imports: DynamicModule[], { http = false, providers = [Callbacks, CallLog] }: { http?: boolean; providers?: Provider[] } = {}): Promise<string> {
  @Module({ imports, providers })
  class AppModule {}
  const failed: unknown = http
    ? await NestFactory.create(AppModule, { rawBody: true, logger: false, abortOnError: false }).then(async (app: INestApplication) => {
        const error = await app.init().then(() => undefined, (reason: unknown) => reason);
        await app.close();
        return error;
      })
    : await NestFactory.createApplicationContext(AppModule, { logger: false, abortOnError: false }).then(
        (app) => app.close(),
        (reason: unknown) => reason,
      );
  expect(failed).toBeInstanceOf(TypeError);
  return (failed as Error).message;
}

/** One queue of an engine for a test, and both sides' modules over it. */
interface QueueSides {
  /** What the worker's line calls it: `the BullMQ queue "…"`. */
  readonly label: string;
  readonly queue: WebhooksModuleWorkerOptions['queue'];
  /** The receiving side, handing off to the queue. */
  receiving(): DynamicModule;
  /** The worker side, with more options if given. */
  working(more?: Omit<WebhooksModuleWorkerOptions, 'queue'>): DynamicModule;
  /** What a second receiver, of its own dedup store, answers a copy of a queued event: 202 on BullMQ (the same job), 200 on pg-boss (the key recorded with the job). */
  readonly copyAnswer: number;
  /** Whether the queue's job of event `id` is finished: completed, or failed out of retries. */
  finished(id: string): Promise<boolean>;
}

/** Runs the spec on the queues of one engine, a new queue for each test. */
function workerSpec(sides: () => Promise<QueueSides>): void {
  it('runs the @OnWebhook methods of the worker app, with the service they inject, once for each event the receiving app queued', async () => {
    const { receiving, working, copyAnswer, finished, queue } = await sides();
    const post = await receiver(receiving());
    const other = await receiver(receiving());
    const worker = await workerApp(working());
    expect(worker.get(WebhooksWorker)).toEqual(new WebhooksWorker(queue.engine, queue.name, ['call.missed', 'message.received']));

    expect(await post(signedRequest())).toBe(202);
    expect(await post(signedRequest({ id: 'evt_2', type: 'message.received' }))).toBe(202);
    expect(await post(signedRequest())).toBe(200);
    expect(await other(signedRequest())).toBe(copyAnswer);
    await vi.waitFor(async () => expect((await finished('evt_1')) && (await finished('evt_2'))).toBe(true), { timeout: 15_000, interval: 100 });
    expect(worker.get(CallLog).seen.sort()).toEqual(['call.missed evt_1', 'message.received evt_2']);
  });

  it("passes the options of on to the worker: onHandlerError hears a method that threw, and schemas check each event first", async () => {
    const { receiving, working, finished } = await sides();
    const post = await receiver(receiving());
    const failures: Array<[string, string]> = [];
    const schemas = {
      'message.received': {
        '~standard': { version: 1 as const, vendor: 'test', validate: (value: unknown) => ((value as MessageReceivedEvent).id === 'evt_bad' ? { issues: [{ message: 'no' }] } : { value }) },
      },
    };
    const worker = await workerApp(working({ schemas, onHandlerError: (error, event) => void failures.push([event.id, (error as Error).name]) }));
    worker.get(CallLog).failOnce.add('evt_1');
    expect(await post(signedRequest())).toBe(202);
    expect(await post(signedRequest({ id: 'evt_bad', type: 'message.received' }))).toBe(202);
    await vi.waitFor(async () => expect((await finished('evt_1')) && (await finished('evt_bad'))).toBe(true), { timeout: 15_000, interval: 100 });
    expect(failures.sort()).toEqual([
      ['evt_1', 'Error'],
      ['evt_bad', 'WebhookHandlerError'],
    ]);
    expect(worker.get(CallLog).seen).toEqual(['call.missed evt_1']);
  });

  it("writes the queue it works and the method of each type to the app's log at bootstrap, under WebhooksModule", async () => {
    const { working, label } = await sides();
    const logs = recordingNestLogger();
    await workerApp(working(), logs.logger);
    expect(logs.of('WebhooksModule')).toEqual([`Working ${label}: call.missed to Callbacks.missed, message.received to Callbacks.received`]);
  });

  it('runs the methods in the worker alone in an app that both receives, with handoff, and works the queue', async () => {
    const { receiving, working, finished } = await sides();
    @Module({ imports: [receiving(), working(), CallsModule] })
    class BothModule {}
    const app = await NestFactory.create(BothModule, { rawBody: true, logger: false, abortOnError: false });
    closing.push(() => app.close());
    await app.listen(0, '127.0.0.1');
    const { body, headers } = signedRequest();
    expect((await fetch(`${(await app.getUrl()).replace('[::1]', '127.0.0.1')}/webhooks`, { method: 'POST', body, headers })).status).toBe(202);
    await vi.waitFor(async () => expect(await finished('evt_1')).toBe(true), { timeout: 15_000, interval: 100 });
    expect(app.get(CallLog).seen).toEqual(['call.missed evt_1']);
    expect(app.get(WebhooksRoute).types).toEqual(['call.missed', 'message.received']);
  });
}

describe.each(BULLMQ_MAJORS)('WebhooksModule.forWorker on $name', (major) => {
  /** A queue of its own, removed after the test. */
  async function bullmqSides(): Promise<QueueSides & { readonly jobs: TestQueue; readonly queue: WebhooksModuleBullMQQueue }> {
    const jobs = major.queue(uniqueQueueName('nest'), redisUrl());
    closing.push(() => dropQueue(jobs));
    const dedup = new TestDedupStore();
    const queue = { engine: 'bullmq', name: jobs.name, dedup: { store: dedup }, worker: { connection: connectionTo(redisUrl()) }, bullmq: major.classes } as const;
    return {
      jobs,
      label: `the BullMQ queue ${JSON.stringify(jobs.name)}`,
      queue,
      receiving: () => WebhooksModule.forRoot({ secret: SECRET, now, handoff: enqueueOnBullMQ(jobs) }),
      working: (more = {}) => WebhooksModule.forWorker({ ...more, queue }),
      copyAnswer: 202,
      finished: async (id) => {
        const job = await jobs.getJob(jobIdOf(keyOf(id)));
        return job !== undefined && ['completed', 'failed'].includes(await job.getState());
      },
    };
  }

  workerSpec(bullmqSides);

  it("writes what its BullMQ worker emits as 'error' to the app's log, which would otherwise take the process down", async () => {
    const { queue } = await bullmqSides();
    const logs = recordingNestLogger();
    const port = await freePort();
    // Nothing answers there; ioredis gives up after its first try.
    const connection = { host: '127.0.0.1', port, maxRetriesPerRequest: null, retryStrategy: () => null };
    await workerApp(WebhooksModule.forWorker({ queue: { ...queue, worker: { connection } } }), logs.logger);
    await vi.waitFor(() => expect(logs.lines.filter(({ level, context }) => level === 'error' && context === 'WebhooksModule').map(({ message }) => message)).toContain(
      `The worker of the BullMQ queue ${JSON.stringify(queue.name)} failed: connect ECONNREFUSED 127.0.0.1:${port}`,
    ));
  });

  it("closes its BullMQ worker at the app's shutdown: Redis then lists no worker on the queue", async () => {
    const { jobs, working } = await bullmqSides();
    const worker = await workerApp(working());
    await vi.waitFor(async () => expect(await jobs.getWorkers()).toHaveLength(1), { timeout: 5_000, interval: 50 });
    await worker.close();
    // BullMQ 5 may still be dropping a connection it was opening as close began.
    await vi.waitFor(async () => expect(await jobs.getWorkers()).toEqual([]), { timeout: 5_000, interval: 50 });
  });
});

describe.each(PG_BOSS_MAJORS)('WebhooksModule.forWorker on $name', (major) => {
  const suite = pgBossSuite(major);
  const BOSS = Symbol('pg-boss');

  /** A provider module of the app's pg-boss instance, which both sides inject. */
  function bossModule(): DynamicModule {
    return { module: class BossModule {}, providers: [{ provide: BOSS, useValue: suite.boss }], exports: [BOSS] };
  }

  /** A queue of its own, with no retries, and a table of its own for the keys enqueue records. */
  async function pgBossSides(): Promise<QueueSides> {
    const name = uniqueTable('queue');
    await suite.boss.createQueue(name, { retryLimit: 0 });
    const table = uniqueTable('queued');
    await migrateProcessedEvents(suite.pool, { table });
    closing.push(() => suite.pool.query(`DROP TABLE ${table}`));
    const queue = { engine: 'pg-boss', boss: suite.boss as unknown as WebhooksModulePgBoss, name, worker: { pollingIntervalSeconds: 0.5 } } as const;
    return {
      label: `the pg-boss queue ${JSON.stringify(name)}`,
      queue,
      receiving: () =>
        WebhooksModule.forRootAsync({
          imports: [bossModule()],
          inject: [BOSS],
          useFactory: (boss: typeof suite.boss) => ({ secret: SECRET, now, handoff: enqueueOnPgBoss(boss, name, { pool: suite.pool, table }) }),
        }),
      working: (more = {}) =>
        WebhooksModule.forWorkerAsync({
          imports: [bossModule()],
          inject: [BOSS],
          useFactory: (boss: WebhooksModulePgBoss) => ({ ...more, queue: { ...queue, boss } }),
        }),
      copyAnswer: 200,
      finished: async (id) => {
        const jobs = await suite.jobs(name);
        const job = jobs.find(({ data }) => (data as { delivery: WebhookDelivery }).delivery.id === id);
        return job !== undefined && ['completed', 'failed'].includes(job.state);
      },
    };
  }

  workerSpec(pgBossSides);

  it("stops its pg-boss worker at the app's shutdown: the jobs queued after it all go to the next worker app", async () => {
    const { receiving, working } = await pgBossSides();
    const post = await receiver(receiving());
    const first = await workerApp(working());
    await first.close();
    const next = await workerApp(working());
    const ids = ['evt_a', 'evt_b', 'evt_c', 'evt_d', 'evt_e'];
    for (const id of ids) expect(await post(signedRequest({ id }))).toBe(202);
    await vi.waitFor(() => expect(next.get(CallLog).seen).toHaveLength(ids.length), { timeout: 15_000, interval: 100 });
    expect(first.get(CallLog).seen).toEqual([]);
  });
});

describe('WebhooksModule.forWorker', () => {
  const queue = { engine: 'bullmq', name: 'webhooks', dedup: { store: new TestDedupStore() } } as const;

  it('fails the bootstrap of an app whose forRoot runs the methods in the request, beside a worker that runs them too', async () => {
    const worker = WebhooksModule.forWorker({ queue: { ...queue, worker: { connection: connectionTo(redisUrl()) } } });
    expect(await bootstrapError([WebhooksModule.forRoot({ secret: SECRET, now }), worker], { http: true })).toBe(
      'svc-webhooks: WebhooksModule.forRoot runs the @OnWebhook methods in the request, as it has no handoff, and WebhooksModule.forWorker runs them for the jobs of a queue: ' +
        'give forRoot handoff: enqueue(...) of svc-webhooks/bullmq or svc-webhooks/pg-boss, for them to run in the worker alone, or leave forWorker out',
    );
  });

  it("fails the bootstrap of a BullMQ worker without a connection, where the app has no @nestjs/bullmq, naming both", async () => {
    expect(await bootstrapError([WebhooksModule.forWorker({ queue })])).toBe(
      'svc-webhooks: WebhooksModule.forWorker needs a connection to the BullMQ queue "webhooks": give queue.worker.connection, ' +
        `or import @nestjs/bullmq's BullModule.forRoot({ connection }) or BullModule.registerQueue({ name: "webhooks" }) in the app`,
    );
  });

  it('fails the bootstrap, naming the fix, for no @OnWebhook method, a queue of no known engine or without a name, a pg-boss without offWork, and on', async () => {
    expect(await bootstrapError([WebhooksModule.forWorker({ queue })], { providers: [] })).toBe(
      'svc-webhooks: WebhooksModule.forWorker found no @OnWebhook method on a provider: its worker would run nothing',
    );
    expect(await bootstrapError([WebhooksModule.forWorker({ queue: { ...queue, engine: 'sqs' as never } })])).toBe(
      "svc-webhooks: WebhooksModule.forWorker needs queue, { engine: 'bullmq', name, dedup } or { engine: 'pg-boss', boss, name }",
    );
    expect(await bootstrapError([WebhooksModule.forWorkerAsync({ useFactory: () => ({}) as never })])).toContain("needs queue, { engine: 'bullmq'");
    expect(await bootstrapError([WebhooksModule.forWorker({ queue: { ...queue, name: '' } })])).toBe('svc-webhooks: WebhooksModule.forWorker needs queue.name, the name of the queue');
    expect(await bootstrapError([WebhooksModule.forWorker({ queue: { engine: 'pg-boss', boss: {} as never, name: 'webhooks' } })])).toBe(
      'svc-webhooks: WebhooksModule.forWorker needs queue.boss, a pg-boss instance (new PgBoss(...), started)',
    );
    expect(await bootstrapError([WebhooksModule.forWorker({ queue, on: {} as never })])).toBe(
      'svc-webhooks: WebhooksModule.forWorker takes no on: the @OnWebhook methods of the providers are the handlers',
    );
  });
});
