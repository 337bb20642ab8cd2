/** The options of svc-webhooks/nestjs's `forWorker` and `forWorkerAsync`, and their checks at bootstrap: the queue, on BullMQ or pg-boss. */
import type { WorkerOptions } from 'bullmq';
import type { WebhookLogger } from '../src/base/logger.js';
import { WebhookOptionsError } from '../src/base/options-error.js';
import type { EventSchemas, HandlerOptions } from '../src/process/handler-types.js';
import type { BullMQClasses, WorkerDedupOptions } from '../src/queues/bullmq/work.js';
import type { PgBossInstance, PgBossWorkOptions } from '../src/queues/pg-boss/pg-boss-types.js';
import { checkOptionsWithoutOn } from './nestjs-handlers.js';

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

/** Checks `options` and their queue: its engine, its name and, on pg-boss, the instance. Throws `WebhookOptionsError`. */
export function checkWorkerOptions(options: WebhooksModuleWorkerOptions): void {
  checkOptionsWithoutOn('WebhooksModule.forWorker', options, 'the queue');
  const { queue } = options;
  const engine = (queue as Partial<WebhooksModuleWorkerOptions['queue']> | null | undefined)?.engine;
  if (engine !== 'bullmq' && engine !== 'pg-boss') {
    throw new WebhookOptionsError("svc-webhooks: WebhooksModule.forWorker needs queue, { engine: 'bullmq', name, dedup } or { engine: 'pg-boss', boss, name }");
  }
  if (typeof queue.name !== 'string' || queue.name === '') throw new WebhookOptionsError('svc-webhooks: WebhooksModule.forWorker needs queue.name, the name of the queue');
  if (queue.engine === 'pg-boss' && typeof (queue.boss as Partial<WebhooksModulePgBoss> | null | undefined)?.offWork !== 'function') {
    throw new WebhookOptionsError('svc-webhooks: WebhooksModule.forWorker needs queue.boss, a pg-boss instance (new PgBoss(...), started)');
  }
}
