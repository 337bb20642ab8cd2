/**
 * svc-webhooks/nestjs: `WebhooksModule.forRoot(options)` (or `forRootAsync`)
 * adds a controller route for the webhook, `POST /webhooks` by default, on
 * the app's platform, Express or Fastify: the app's own middleware, guards,
 * interceptors, exception filters and body parsers run before it as before
 * any route, and it verifies the bytes Nest keeps with `rawBody: true`.
 * Provider methods decorated `@OnWebhook('call.missed')` are found at
 * bootstrap and run as the handlers of `on` do elsewhere, under the dedup
 * claim; or `handoff` hands each delivery to a queue, and
 * `WebhooksModule.forWorker({ queue })` runs the same methods for its jobs,
 * in this app or another, with the providers they inject. A
 * misconfiguration fails the bootstrap with a `WebhookOptionsError` that
 * names the fix.
 * @packageDocumentation
 */
// Inline types rather than `import type`: api/nestjs.api.md shows these imports as the declarations write them.
import { type DynamicModule, type FactoryProvider, type ModuleMetadata, type Provider } from '@nestjs/common';
import { ApplicationConfig, DiscoveryModule, DiscoveryService, HttpAdapterHost, ModuleRef } from '@nestjs/core';
import { handlersIn } from './nestjs-handlers.js';
import { mountRoute, WebhooksRoute, type MountedRoute } from './nestjs-mount.js';
import { checkAsyncOptions, type WebhooksModuleOptions } from './nestjs-options.js';
import { webhooksController } from './nestjs-route.js';
import { queueWorker, WebhooksWorker, type QueueWorker } from './nestjs-worker.js';
import type { WebhooksModuleWorkerOptions } from './nestjs-worker-options.js';

export { OnWebhook, type OnWebhookDecorator, type WebhookMethod } from './nestjs-handlers.js';
export { WebhooksRoute } from './nestjs-mount.js';
export {
  type WebhookMethodsMode,
  type WebhooksModuleEntryOptions,
  type WebhooksModuleOptions,
  type WebhooksModuleTenants,
} from './nestjs-options.js';
export {
  type WebhooksModuleBullMQQueue,
  type WebhooksModulePgBoss,
  type WebhooksModulePgBossQueue,
  type WebhooksModuleWorkerOptions,
} from './nestjs-worker-options.js';
export { WebhooksWorker } from './nestjs-worker.js';

/**
 * `forRootAsync`'s options (`forWorkerAsync`'s, with `O` the worker's): the
 * options from a factory, with what it injects (a `ConfigService`, a store, a queue).
 */
export interface WebhooksModuleAsyncOptions<O = WebhooksModuleOptions> extends Pick<ModuleMetadata, 'imports'> {
  /** Builds the options, with the providers of `inject` as its arguments. */
  readonly useFactory: (...injected: never[]) => O | Promise<O>;
  /**
   * The tokens of the providers `useFactory` takes, in order.
   * @default []
   */
  readonly inject?: FactoryProvider['inject'];
}

/** The tokens of the options, and of the route and the worker with the hooks Nest calls on them. */
const OPTIONS = Symbol('svc-webhooks options');
const MOUNTED = Symbol('svc-webhooks route');
const WORKER = Symbol('svc-webhooks worker');

/** The module that adds the webhook route and finds the `@OnWebhook` methods. */
export class WebhooksModule {
  /**
   * The module with `options`.
   * @example
   * ```ts
   * import { Injectable, Module } from '@nestjs/common';
   * import { OnWebhook, WebhooksModule } from 'svc-webhooks/nestjs';
   * import type { CallMissedEvent, WebhookDelivery } from 'svc-webhooks';
   *
   * @Injectable()
   * class Callbacks {
   *   @OnWebhook('call.missed')
   *   async missed(event: CallMissedEvent, { id }: WebhookDelivery) {
   *     await queueCallback(id, event.data.object.id);
   *   }
   * }
   *
   * @Module({ imports: [WebhooksModule.forRoot({ secret: process.env.WEBHOOK_SECRET! })], providers: [Callbacks] })
   * export class AppModule {}
   * ```
   */
  static forRoot(options: WebhooksModuleOptions): DynamicModule {
    return moduleWith([], { provide: OPTIONS, useValue: options });
  }

  /**
   * The module with the options `useFactory` builds, once the providers it
   * injects are ready: a secret from a `ConfigService`, a store or a queue
   * that is a provider of the app (as `@nestjs/bullmq` provides its queues).
   * Throws `WebhookOptionsError` at once for options without a `useFactory` function.
   * @example
   * ```ts
   * import { ConfigModule, ConfigService } from '@nestjs/config';
   *
   * WebhooksModule.forRootAsync({
   *   imports: [ConfigModule],
   *   inject: [ConfigService],
   *   useFactory: (config: ConfigService) => ({ secret: config.getOrThrow<string>('WEBHOOK_SECRET') }),
   * });
   * ```
   * @example
   * A queue of the app's `@nestjs/bullmq`, injected, for the `handoff`:
   * ```ts
   * import { BullModule, getQueueToken } from '@nestjs/bullmq';
   * import type { Queue } from 'bullmq';
   * import { enqueue } from 'svc-webhooks/bullmq';
   *
   * WebhooksModule.forRootAsync({
   *   imports: [ConfigModule, BullModule.registerQueue({ name: 'webhooks' })],
   *   inject: [ConfigService, getQueueToken('webhooks')],
   *   useFactory: (config: ConfigService, queue: Queue) => ({ secret: config.getOrThrow<string>('WEBHOOK_SECRET'), handoff: enqueue(queue) }),
   * });
   * ```
   */
  static forRootAsync(options: WebhooksModuleAsyncOptions): DynamicModule {
    const { imports = [], useFactory, inject = [] } = checkAsyncOptions('forRootAsync', options);
    return moduleWith(imports, { provide: OPTIONS, useFactory, inject });
  }

  /**
   * The module that works a queue: at the app's bootstrap it starts a
   * worker (BullMQ's or pg-boss's, through that engine's `work()`) that runs
   * the `@OnWebhook` methods of the app's providers for each job a
   * receiving side's `handoff` queued, each event once (BullMQ: under the
   * worker's dedup store; pg-boss: as its `work()` says), with the services
   * the providers inject; at the app's shutdown (`app.close()`, or a signal
   * with `app.enableShutdownHooks()`) it stops the worker. An application
   * context (`NestFactory.createApplicationContext`) is enough; an app that
   * also receives (`forRoot`) must hand off (`handoff`), or its methods would
   * run in the request too.
   * @example
   * ```ts
   * import { Inject, Injectable, Module } from '@nestjs/common';
   * import { NestFactory } from '@nestjs/core';
   * import { OnWebhook, WebhooksModule } from 'svc-webhooks/nestjs';
   * import { RedisDedupStore } from 'svc-webhooks/redis';
   * import type { CallMissedEvent, WebhookDelivery } from 'svc-webhooks';
   *
   * @Injectable()
   * class Callbacks {
   *   // A service of the app, injected as into any provider.
   *   constructor(@Inject(CallsService) private readonly calls: CallsService) {}
   *
   *   @OnWebhook('call.missed')
   *   async missed(event: CallMissedEvent, { id }: WebhookDelivery) {
   *     await this.calls.callBack(id, event.data.object.id);
   *   }
   * }
   *
   * @Module({
   *   imports: [
   *     WebhooksModule.forWorker({
   *       queue: { engine: 'bullmq', name: 'webhooks', dedup: { store: new RedisDedupStore(redis, { keyPrefix: 'svc-webhooks:worked:' }) } },
   *     }),
   *   ],
   *   providers: [Callbacks, CallsService],
   * })
   * class WorkerModule {}
   *
   * const worker = await NestFactory.createApplicationContext(WorkerModule);
   * worker.enableShutdownHooks();
   * ```
   */
  static forWorker(options: WebhooksModuleWorkerOptions): DynamicModule {
    return workerModule([], { provide: OPTIONS, useValue: options });
  }

  /**
   * The worker module with the options `useFactory` builds, once the
   * providers it injects are ready: a pg-boss instance, a dedup store, a `ConfigService`.
   * Throws `WebhookOptionsError` at once for options without a `useFactory` function.
   * @example
   * ```ts
   * // BossModule provides the app's started pg-boss instance under PG_BOSS, and stops it at shutdown.
   * WebhooksModule.forWorkerAsync({
   *   imports: [BossModule],
   *   inject: [PG_BOSS],
   *   useFactory: (boss: PgBoss) => ({ queue: { engine: 'pg-boss', boss, name: 'webhooks' } }),
   * });
   * ```
   */
  static forWorkerAsync(options: WebhooksModuleAsyncOptions<WebhooksModuleWorkerOptions>): DynamicModule {
    const { imports = [], useFactory, inject = [] } = checkAsyncOptions('forWorkerAsync', options);
    return workerModule(imports, { provide: OPTIONS, useFactory, inject });
  }
}

/** The receiving module: its own controller, given its route once the options are known, and the route it exports. */
function moduleWith(imports: NonNullable<ModuleMetadata['imports']>, options: Provider): DynamicModule {
  const route = webhooksController();
  return {
    module: WebhooksModule,
    imports: [DiscoveryModule, ...imports],
    controllers: [route.controller],
    providers: [
      options,
      {
        provide: MOUNTED,
        useFactory: (given: WebhooksModuleOptions, host: HttpAdapterHost, discovery: DiscoveryService, config: ApplicationConfig) => mountRoute(route, given, host, discovery, config),
        inject: [OPTIONS, HttpAdapterHost, DiscoveryService, ApplicationConfig],
      },
      { provide: WebhooksRoute, useFactory: (mounted: MountedRoute) => mounted.route, inject: [MOUNTED] },
    ],
    exports: [WebhooksRoute],
  };
}

/** The worker module: the queue's worker, started and stopped with the app, and the worker it exports. */
function workerModule(imports: NonNullable<ModuleMetadata['imports']>, options: Provider): DynamicModule {
  return {
    module: WebhooksModule,
    imports: [DiscoveryModule, ...imports],
    providers: [
      options,
      {
        provide: WORKER,
        useFactory: (given: WebhooksModuleWorkerOptions, discovery: DiscoveryService, moduleRef: ModuleRef) => queueWorker(given, handlersIn(discovery), moduleRef),
        inject: [OPTIONS, DiscoveryService, ModuleRef],
      },
      { provide: WebhooksWorker, useFactory: (worker: QueueWorker) => worker.worker, inject: [WORKER] },
    ],
    exports: [WebhooksWorker],
  };
}
