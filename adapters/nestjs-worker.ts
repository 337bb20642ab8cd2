/**
 * The worker side of svc-webhooks/nestjs: `WebhooksModule.forWorker` runs the
 * app's `@OnWebhook` methods for the jobs a receiving side's `handoff` queued,
 * on BullMQ or pg-boss, through that engine's own `work()`: started at the
 * app's bootstrap, stopped at its shutdown. On BullMQ, without a connection
 * of its own, it takes the app's `@nestjs/bullmq` one.
 */
import type { ModuleRef } from '@nestjs/core';
import type { WorkerOptions } from 'bullmq';
import type { WebhookLogger } from '../src/base/logger.js';
import { WebhookOptionsError } from '../src/base/options-error.js';
import { reasonOf } from '../src/base/user-code.js';
import type { KnownEventType } from '../src/core/event.js';
import type { EventSchemas, HandlerOptions } from '../src/process/handler-types.js';
import { work as workOnBullMQ } from '../src/queues/bullmq/work.js';
import { work as workOnPgBoss } from '../src/queues/pg-boss/work.js';
import { nestBullMQConnection } from './nestjs-bullmq-connection.js';
import type { WebhookMethods } from './nestjs-handlers.js';
import { describeMethods, moduleLog } from './nestjs-log.js';
import { checkWorkerOptions, type WebhooksModulePgBoss, type WebhooksModuleWorkerOptions } from './nestjs-worker-options.js';

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
  checkWorkerOptions(options);
  const { engine, name } = options.queue;
  if (methods.types.length === 0) throw new WebhookOptionsError('svc-webhooks: WebhooksModule.forWorker found no @OnWebhook method on a provider: its worker would run nothing');
  const where = `the ${ENGINE_NAMES[engine]} queue ${JSON.stringify(name)}`;
  let started: Promise<Stop> | undefined;
  return {
    worker: new WebhooksWorker(engine, name, methods.types),
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
