/**
 * The worker side of svc-webhooks/nestjs: `WebhooksModule.forWorker` runs the
 * app's `@OnWebhook` methods for the jobs a receiving side's `handoff` queued,
 * on BullMQ or pg-boss, through that engine's own `work()`: started at the
 * app's bootstrap, stopped at its shutdown. On BullMQ, without a connection
 * of its own, it takes the app's `@nestjs/bullmq` one, found by the tokens
 * that package provides it under: nothing of it is imported.
 */
import type { ModuleRef } from '@nestjs/core';
import type { WorkerOptions } from 'bullmq';
import type { WebhookLogger } from '../src/base/logger.js';
import { WebhookOptionsError } from '../src/base/options-error.js';
import { reasonOf } from '../src/base/user-code.js';
import type { KnownEventType } from '../src/core/event.js';
import type { EventSchemas, HandlerOptions } from '../src/process/handler-types.js';
import { work as workOnBullMQ, type BullMQClasses, type WorkerDedupOptions } from '../src/queues/bullmq/work.js';
import type { PgBossInstance, PgBossWorkOptions } from '../src/queues/pg-boss/pg-boss-types.js';
import { work as workOnPgBoss } from '../src/queues/pg-boss/work.js';
import type { WebhookMethods } from './nestjs-handlers.js';
import { describeMethods, moduleLog } from './nestjs-log.js';

/** A BullMQ queue (BullMQ 5 or 6) for `forWorker`: the one the receiving side's `handoff: enqueue(queue)` adds to. */
export interface WebhooksModuleBullMQQueue {
  /** The queue's engine. */
  readonly engine: 'bullmq';
  /** The queue's name, as the receiving side's `Queue` has it. Required. */
  readonly name: string;
  /**
   * Where the worker records the events it processed, and how it claims
   * them, as the `dedup` of svc-webhooks/bullmq's `work()` takes it: a
   * `store` shared by every worker of the queue, apart from the receivers'. Required.
   */
  readonly dedup: WorkerDedupOptions;
  /**
   * BullMQ's `Worker` options (`connection`, `concurrency`, …), passed to
   * BullMQ as given. Without `connection`, the worker takes the
   * `connection` and `prefix` of the app's
   * `@nestjs/bullmq`: those of its queue of `name`
   * (`BullModule.registerQueue({ name })`), else those of
   * `BullModule.forRoot`; with neither, the bootstrap fails.
   * @default {} (the connection of `@nestjs/bullmq`)
   */
  readonly worker?: Partial<WorkerOptions>;
  /**
   * BullMQ's classes, where it is installed under another name or bundled.
   * @default await import('bullmq')
   */
  readonly bullmq?: BullMQClasses;
}

/** A pg-boss instance (10, 11 or 12) for `forWorker`: what svc-webhooks/pg-boss's `work()` calls, and how its worker is stopped. */
export interface WebhooksModulePgBoss extends PgBossInstance {
  /** Stops a worker: pg-boss 10 and 11 take `{ id }`, pg-boss 12 the queue's name and `{ id }`. */
  offWork(worker: string | { readonly id: string }, options?: { readonly id: string }): Promise<unknown>;
}

/** A pg-boss queue for `forWorker`: the one the receiving side's `handoff: enqueue(boss, name, { pool })` sends to. */
export interface WebhooksModulePgBossQueue {
  /** The queue's engine. */
  readonly engine: 'pg-boss';
  /**
   * The app's pg-boss instance, started. The module starts its worker on it
   * at bootstrap and stops that worker at shutdown; the instance is yours to
   * stop after (`boss.stop()`, which on pg-boss 10 and 11 is what waits for
   * the jobs still running). Required.
   */
  readonly boss: WebhooksModulePgBoss;
  /** The queue's name. Required. */
  readonly name: string;
  /**
   * pg-boss's work options (`batchSize`, `pollingIntervalSeconds`, …), passed on as given.
   * @default {} (pg-boss's defaults)
   */
  readonly worker?: PgBossWorkOptions;
}

/**
 * `forWorker`'s options: the queue whose jobs run the `@OnWebhook` methods,
 * and the options of `on` besides the handlers (`schemas`,
 * `unknownEvents`, `onUnknownEvent`, `onHandlerError`), which the worker
 * applies as a receiver would.
 */
export interface WebhooksModuleWorkerOptions extends Omit<HandlerOptions<EventSchemas>, 'on'> {
  /** The queue: `{ engine: 'bullmq', name, dedup }` or `{ engine: 'pg-boss', boss, name }`. Required. */
  readonly queue: WebhooksModuleBullMQQueue | WebhooksModulePgBossQueue;
  /** Not in the module: its `@OnWebhook` methods are the handlers. */
  readonly on?: undefined;
  /**
   * Where the worker's lines about what went wrong go (a method that threw,
   * a store that failed, a job that holds no queued delivery), with fields
   * to filter on, as the `logger` of `work()`.
   * @default one sentence per line on `console.error`
   */
  readonly logger?: WebhookLogger;
}

/** The worker the module runs: a provider it exports, for `app.get(WebhooksWorker)` or to inject. */
export class WebhooksWorker {
  /** The queue's engine. */
  readonly engine: 'bullmq' | 'pg-boss';
  /** The queue's name. */
  readonly queue: string;
  /** The event types the `@OnWebhook` methods handle. */
  readonly types: readonly KnownEventType[];

  /** Built by the module at bootstrap. */
  constructor(engine: 'bullmq' | 'pg-boss', queue: string, types: readonly KnownEventType[]) {
    this.engine = engine;
    this.queue = queue;
    this.types = types;
  }
}

/** The worker of one `forWorker`, and the hooks Nest calls on it: it starts at the app's bootstrap and stops at its shutdown. */
export interface QueueWorker {
  readonly worker: WebhooksWorker;
  onApplicationBootstrap(): Promise<void>;
  onModuleDestroy(): Promise<void>;
}

const ENGINE_NAMES = { bullmq: 'BullMQ', 'pg-boss': 'pg-boss' } as const;

/** Stops a worker that started; resolves once it has. */
type Stop = () => Promise<unknown>;

/**
 * The worker of `options` over the app's `methods`, checked as providers are
 * created; it starts once they all are (a method's provider, the app's
 * `@nestjs/bullmq` queue), at bootstrap.
 */
export function queueWorker(options: WebhooksModuleWorkerOptions, methods: WebhookMethods, moduleRef: ModuleRef): QueueWorker {
  if (typeof options !== 'object' || options === null) throw new WebhookOptionsError('svc-webhooks: WebhooksModule.forWorker needs options with the queue');
  if (options.on !== undefined) throw new WebhookOptionsError('svc-webhooks: WebhooksModule.forWorker takes no on: the @OnWebhook methods of the providers are the handlers');
  const { queue } = options;
  const engine = (queue as Partial<WebhooksModuleWorkerOptions['queue']> | null | undefined)?.engine;
  if (engine !== 'bullmq' && engine !== 'pg-boss') {
    throw new WebhookOptionsError("svc-webhooks: WebhooksModule.forWorker needs queue, { engine: 'bullmq', name, dedup } or { engine: 'pg-boss', boss, name }");
  }
  if (typeof queue.name !== 'string' || queue.name === '') throw new WebhookOptionsError('svc-webhooks: WebhooksModule.forWorker needs queue.name, the name of the queue');
  if (queue.engine === 'pg-boss' && typeof (queue.boss as Partial<WebhooksModulePgBoss> | null | undefined)?.offWork !== 'function') {
    throw new WebhookOptionsError('svc-webhooks: WebhooksModule.forWorker needs queue.boss, a pg-boss instance (new PgBoss(...), started)');
  }
  if (methods.types.length === 0) throw new WebhookOptionsError('svc-webhooks: WebhooksModule.forWorker found no @OnWebhook method on a provider: its worker would run nothing');
  const where = `the ${ENGINE_NAMES[engine]} queue ${JSON.stringify(queue.name)}`;
  let started: Promise<Stop> | undefined;
  return {
    worker: new WebhooksWorker(engine, queue.name, methods.types),
    async onApplicationBootstrap() {
      started = start(options, methods, moduleRef, where);
      await started;
      moduleLog.log(`Working ${where}: ${describeMethods(methods)}`);
    },
    // The first of Nest's shutdown hooks: the jobs still running end while the providers they use are up.
    async onModuleDestroy() {
      const stop = await started?.catch(() => undefined);
      await stop?.();
    },
  };
}

/** Starts the engine's worker, through its `work()`, with the methods as the handlers of `on`. */
async function start(options: WebhooksModuleWorkerOptions, methods: WebhookMethods, moduleRef: ModuleRef, where: string): Promise<Stop> {
  const { queue, schemas, unknownEvents, onUnknownEvent, onHandlerError, logger } = options;
  // Only what was given: work() takes a key given as undefined for one given.
  const given = Object.entries({ schemas, unknownEvents, onUnknownEvent, onHandlerError, logger }).filter(([, value]) => value !== undefined);
  const handlers = { ...Object.fromEntries(given), on: methods.on } as HandlerOptions<EventSchemas> & { readonly logger?: WebhookLogger };
  if (queue.engine === 'pg-boss') {
    const { boss, name, worker = {} } = queue;
    const id = await workOnPgBoss(boss, name, { ...handlers, worker });
    return () => stopOnPgBoss(boss, name, id);
  }
  const { name, dedup, worker: workerOptions = {}, bullmq } = queue;
  const connection = workerOptions.connection === undefined ? nestBullMQConnection(moduleRef, name) : {};
  if (connection === undefined) {
    throw new WebhookOptionsError(
      `svc-webhooks: WebhooksModule.forWorker needs a connection to ${where}: give queue.worker.connection, ` +
        `or import @nestjs/bullmq's BullModule.forRoot({ connection }) or BullModule.registerQueue({ name: ${JSON.stringify(name)} }) in the app`,
    );
  }
  const worker = await workOnBullMQ(name, { ...handlers, dedup, worker: { ...connection, ...workerOptions } as WorkerOptions, ...(bullmq !== undefined && { bullmq }) });
  // An 'error' nobody listens to would be thrown, and take the process down: it goes to the app's log.
  worker.on('error', (error) => moduleLog.error(`The worker of ${where} failed: ${reasonOf(error)}`));
  return () => worker.close();
}

/**
 * Stops the pg-boss worker `id`: pg-boss 10 and 11 take `{ id }` (the
 * queue's name would stop every worker of the queue); pg-boss 12 refuses
 * it, and takes the name and `{ id }`, then waits for the jobs still running.
 */
async function stopOnPgBoss(boss: WebhooksModulePgBoss, name: string, id: string): Promise<void> {
  await boss.offWork({ id }).catch(() => boss.offWork(name, { id }));
}

/** What the worker takes of `@nestjs/bullmq`'s options for a queue: where Redis is. */
type NestBullMQConnection = Pick<WorkerOptions, 'connection' | 'prefix'>;

/**
 * The connection of the app's `@nestjs/bullmq` for the queue `name`: its
 * registered queue's (`getQueueToken(name)`), else the one of its
 * `forRoot` (`getSharedConfigToken()`), as `@nestjs/bullmq`'s own workers
 * take it; `undefined` where the app has neither.
 */
function nestBullMQConnection(moduleRef: ModuleRef, name: string): NestBullMQConnection | undefined {
  const options = provided<{ readonly opts?: NestBullMQConnection }>(moduleRef, `BullQueue_${name}`)?.opts ?? provided<NestBullMQConnection>(moduleRef, 'BULLMQ_CONFIG(default)');
  if (options?.connection === undefined) return undefined;
  const { connection, prefix } = options;
  return { connection, ...(prefix !== undefined && { prefix }) };
}

/** The provider of `token` in any module of the app, or `undefined` where there is none. */
function provided<T>(moduleRef: ModuleRef, token: string): T | undefined {
  try {
    return moduleRef.get<unknown, T>(token, { strict: false });
  } catch {
    // Nest's UnknownElementException: the app has no such provider.
    return undefined;
  }
}
