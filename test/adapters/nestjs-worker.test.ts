/**
 * `WebhooksModule.forWorker` over HTTP and a real queue, on both BullMQ
 * majors (Redis) and each pg-boss major this Node loads (Postgres): a Nest
 * app receives with `handoff`, its `@OnWebhook` methods left to the worker;
 * a Nest worker app runs those methods, with the service they inject, once
 * per event; the options of `on` reach the worker; the worker's line in the
 * app's log; shutdown stops the worker; and the bootstraps that fail, naming the fix.
 */
import 'reflect-metadata';
import { setTimeout as sleep } from 'node:timers/promises';
import { Inject, Injectable, Module, type DynamicModule, type INestApplication, type INestApplicationContext, type LoggerService, type Provider, type Type } from '@nestjs/common';
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

/** A provider of the worker app that injects the worker the module exports. */
@Injectable()
class WorkerStatus {
  constructor(@Inject(WebhooksWorker) readonly worker: WebhooksWorker) {}
}

/** The feature module both sides import: the receiving app has the methods too, and leaves them to the worker. */
@Module({ providers: [CallLog, Callbacks], exports: [CallLog] })
class CallsModule {}

const closing: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

/** A receiving app of `webhooks` and the methods, listening on 127.0.0.1; answers how to post to its route. */
async function receiver(webhooks: DynamicModule, logger: LoggerService | false = false): Promise<(request: SignedRequest) => Promise<number>> {
  @Module({ imports: [webhooks, CallsModule] })
  class ReceiverModule {}
  const app = await NestFactory.create(ReceiverModule, { rawBody: true, logger, abortOnError: false });
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

/** The root module of an app of `imports` and `providers`, the methods and their service by default. */
function appModule(imports: DynamicModule[], providers: Provider[] = [Callbacks, CallLog]): Type {
  @Module({ imports, providers })
  class AppModule {}
  return AppModule;
}

/** An HTTP app of `imports` and `providers`, not yet bootstrapped: Nest runs its hooks at `init()` or `listen()`. */
function httpApp(imports: DynamicModule[], { providers, logger = false }: { providers?: Provider[]; logger?: LoggerService | false } = {}): Promise<INestApplication> {
  return NestFactory.create(appModule(imports, providers), { rawBody: true, logger, abortOnError: false });
}

/** The error an app of `imports` and `providers` fails its bootstrap with, an HTTP app if `http`; answers its message. */
async function bootstrapError(imports: DynamicModule[], { http = false, providers }: { http?: boolean; providers?: Provider[] } = {}): Promise<string> {
  const failed: unknown = http
    ? await httpApp(imports, { providers }).then(async (app) => {
        const error = await app.init().then(() => undefined, (reason: unknown) => reason);
        await app.close();
        return error;
      })
    : await NestFactory.createApplicationContext(appModule(imports, providers), { logger: false, abortOnError: false }).then(
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
    const worker = await workerApp(working(), false, [WorkerStatus]);
    // The worker the module exports, as a provider of the app injects it.
    expect(worker.get(WorkerStatus).worker).toEqual({ engine: queue.engine, queue: queue.name, types: ['call.missed', 'message.received'] });

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

  it("writes to the receiving app's log that its route hands each delivery to the queue, whose worker runs the methods of each type", async () => {
    const { receiving } = await sides();
    const logs = recordingNestLogger();
    await receiver(receiving(), logs.logger);
    expect(logs.of('WebhooksModule')).toEqual([
      'Mapped {/webhooks, POST} route: each delivery to its queue, whose worker (WebhooksModule.forWorker) runs the @OnWebhook methods of call.missed, message.received',
    ]);
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

  it('builds its worker from the BullMQ classes given as queue.bullmq', async () => {
    const { queue } = await bullmqSides();
    const built: unknown[] = [];
    const Worker = new Proxy(major.classes.Worker, {
      construct: (target, args, newTarget) => {
        built.push(args[0]);
        return Reflect.construct(target, args, newTarget) as object;
      },
    });
    await workerApp(WebhooksModule.forWorker({ queue: { ...queue, bullmq: { ...major.classes, Worker } } }));
    expect(built).toEqual([queue.name]);
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
  function bossModule(boss: WebhooksModulePgBoss): DynamicModule {
    return { module: class BossModule {}, providers: [{ provide: BOSS, useValue: boss }], exports: [BOSS] };
  }

  /** The suite's instance, as the module takes it. */
  const suiteBoss = (): WebhooksModulePgBoss => suite.boss as unknown as WebhooksModulePgBoss;

  /**
   * The suite's instance with the offWork of pg-boss 12, whatever its major: it takes the queue's
   * name, and `{ id }` to stop that worker alone (every worker of the queue without it); `{ id }` alone it refuses.
   */
  function offWorkByName(): WebhooksModulePgBoss {
    const own = suiteBoss();
    return {
      send: own.send.bind(own),
      work: own.work.bind(own),
      complete: own.complete.bind(own),
      fail: own.fail!.bind(own),
      async offWork(name, options) {
        if (typeof name !== 'string') throw new Error('queue name must be a string');
        await (options?.id ? major.offWork(suite.boss, name, options.id) : own.offWork(name));
      },
    };
  }

  /** A queue of its own, with no retries, and a table of its own for the keys enqueue records; both sides inject `instance`, the suite's by default. */
  async function pgBossSides(instance = suiteBoss()): Promise<QueueSides> {
    const name = uniqueTable('queue');
    await suite.boss.createQueue(name, { retryLimit: 0 });
    const table = uniqueTable('queued');
    await migrateProcessedEvents(suite.pool, { table });
    closing.push(() => suite.pool.query(`DROP TABLE ${table}`));
    const queue = { engine: 'pg-boss', boss: instance, name, worker: { pollingIntervalSeconds: 0.5 } } as const;
    return {
      label: `the pg-boss queue ${JSON.stringify(name)}`,
      queue,
      receiving: () =>
        WebhooksModule.forRootAsync({
          imports: [bossModule(instance)],
          inject: [BOSS],
          useFactory: (boss: typeof suite.boss) => ({ secret: SECRET, now, handoff: enqueueOnPgBoss(boss, name, { pool: suite.pool, table }) }),
        }),
      working: (more = {}) =>
        WebhooksModule.forWorkerAsync({
          imports: [bossModule(instance)],
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

  it.each([
    ['its own offWork', suiteBoss],
    ["pg-boss 12's offWork(name, { id })", offWorkByName],
  ])(
    "stops its own pg-boss worker alone at the app's shutdown, on an instance with %s: the jobs queued after all go to another worker app of the queue",
    async (_offWork, instance) => {
      const { receiving, working } = await pgBossSides(instance());
      const post = await receiver(receiving());
      const first = await workerApp(working());
      // Up before the first closes: stopping every worker of the queue would stop it too.
      const next = await workerApp(working());
      await first.close();
      // pg-boss stops a worker without waiting for a fetch it has under way (one waiting for a pooled connection, say): let that end.
      await sleep(1_000);
      const ids = ['evt_a', 'evt_b', 'evt_c', 'evt_d', 'evt_e'];
      for (const id of ids) expect(await post(signedRequest({ id }))).toBe(202);
      const [firstSeen, nextSeen] = [first.get(CallLog).seen, next.get(CallLog).seen];
      await vi.waitFor(() => expect(firstSeen.length + nextSeen.length).toBe(ids.length), { timeout: 15_000, interval: 100 });
      expect(firstSeen).toEqual([]);
    },
    20_000,
  );
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
    expect(await bootstrapError([WebhooksModule.forWorkerAsync({ useFactory: () => null as never })])).toBe('svc-webhooks: WebhooksModule.forWorker needs options with the queue');
    for (const name of ['', undefined]) {
      expect(await bootstrapError([WebhooksModule.forWorker({ queue: { ...queue, name: name as never } })])).toBe('svc-webhooks: WebhooksModule.forWorker needs queue.name, the name of the queue');
    }
    for (const boss of [{}, undefined]) {
      expect(await bootstrapError([WebhooksModule.forWorker({ queue: { engine: 'pg-boss', boss: boss as never, name: 'webhooks' } })])).toBe(
        'svc-webhooks: WebhooksModule.forWorker needs queue.boss, a pg-boss instance (new PgBoss(...), started)',
      );
    }
    expect(await bootstrapError([WebhooksModule.forWorker({ queue, on: {} as never })])).toBe(
      'svc-webhooks: WebhooksModule.forWorker takes no on: the @OnWebhook methods of the providers are the handlers',
    );
  });

  it("closes an app whose worker never started with no error in the app's log: one closed before its bootstrap, and one whose bootstrap failed", async () => {
    const logs = recordingNestLogger();
    const unstarted = await httpApp([WebhooksModule.forWorker({ queue })], { logger: logs.logger });
    await unstarted.close();
    const failed = await httpApp([WebhooksModule.forWorker({ queue })], { logger: logs.logger });
    await expect(failed.init()).rejects.toThrow('needs a connection to the BullMQ queue "webhooks"');
    await failed.close();
    // Nest logs what a shutdown hook threw, and closes the app all the same.
    expect(logs.lines.filter(({ level }) => level === 'error')).toEqual([]);
  });
});
