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
import { RequestMethod, type DynamicModule, type FactoryProvider, type ModuleMetadata, type Provider } from '@nestjs/common';
import { ApplicationConfig, DiscoveryModule, DiscoveryService, HttpAdapterHost, ModuleRef } from '@nestjs/core';
import type { KnownEventType } from '../src/core/event.js';
import type { EventSchemas } from '../src/process/handler-types.js';
import { createPipeline, type EntryOptions, type PipelineOptions } from '../src/receive/pipeline.js';
import type { SingleEndpoint } from '../src/receive/receiver.js';
import type { TenantsOptions } from '../src/receive/tenants.js';
import type { HandlersMode, HandoffMode } from '../src/receive/what-runs.js';
import { checkRenamed } from '../src/base/option-checks.js';
import { describeMethods, handlersIn, type WebhookMethods } from './nestjs-handlers.js';
import { WebhookOptionsError } from '../src/base/options-error.js';
import { nestPlatform, webhooksController, type RouteController, type RouteRequest } from './nestjs-route.js';
import { moduleLog, queueWorker, WebhooksWorker, type QueueWorker, type WebhooksModuleWorkerOptions } from './nestjs-worker.js';

export { OnWebhook, type OnWebhookDecorator, type WebhookMethod } from './nestjs-handlers.js';
export {
  WebhooksWorker,
  type WebhooksModuleBullMQQueue,
  type WebhooksModulePgBoss,
  type WebhooksModulePgBossQueue,
  type WebhooksModuleWorkerOptions,
} from './nestjs-worker.js';

/** The module's options besides what runs: the entry's, and where the route is. */
export interface WebhooksModuleEntryOptions extends EntryOptions {
  /**
   * The webhook route's path, below Nest's global prefix as every route of
   * the app (exclude it there to serve it at `path` itself).
   * @default '/webhooks'
   */
  readonly path?: string;
}

/** Many tenants on the module's route: the route is `<path>/:tenant`, which names each request's tenant. */
export interface WebhooksModuleTenants {
  /**
   * Each tenant's secret and how it is cached, as an entry's `tenants`
   * takes them, but for `of`: the module reads the tenant from the route.
   * The tenant reaches the delivery. Required, unless `secret` is given instead.
   */
  readonly tenants: Omit<TenantsOptions<never>, 'of'>;
  /** Not with `tenants`: each tenant's secret comes from `tenants.secret`. */
  readonly secret?: undefined;
}

/** The `@OnWebhook` methods run for each delivery, with the options of `on` besides the handlers. */
export interface WebhookMethodsMode extends Omit<Partial<HandlersMode<EventSchemas>>, 'on'> {
  /** Not in the module: its `@OnWebhook` methods are the handlers. */
  readonly on?: undefined;
}

/**
 * The module's options: the entry's, where the route is, exactly one of
 * `secret` (one endpoint) or `tenants`, and what runs: the `@OnWebhook`
 * methods (with `schemas`, `unknownEvents`, `onUnknownEvent`,
 * `onHandlerError`), or a `handoff` to a queue (`enqueue()` of
 * `svc-webhooks/bullmq` or `svc-webhooks/pg-boss`). With a `handoff`, the
 * `@OnWebhook` methods never run in the request: `forWorker`'s worker runs
 * them, in this app or another.
 */
export type WebhooksModuleOptions = WebhooksModuleEntryOptions & (SingleEndpoint | WebhooksModuleTenants) & (WebhookMethodsMode | HandoffMode);

/** Options of rc.1 by the place they have now: a caller that still gives one is told, not ignored. */
const MOVED = { tenant: 'tenants, with tenants.secret: the route is then <path>/:tenant' } as const;

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

/** The webhook route the module added: a provider it exports, for `app.get(WebhooksRoute)` or to inject. */
export class WebhooksRoute {
  /** The route's path, below the app's global prefix unless that excludes it. */
  readonly path: string;
  /** The event types the decorated methods handle. */
  readonly types: readonly KnownEventType[];

  /** Built by the module at bootstrap. */
  constructor(path: string, types: readonly KnownEventType[]) {
    this.path = path;
    this.types = types;
  }
}

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
  static forRootAsync({ imports = [], useFactory, inject = [] }: WebhooksModuleAsyncOptions): DynamicModule {
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
  static forWorkerAsync({ imports = [], useFactory, inject = [] }: WebhooksModuleAsyncOptions<WebhooksModuleWorkerOptions>): DynamicModule {
    return workerModule(imports, { provide: OPTIONS, useFactory, inject });
  }
}

/** The route, and the hooks Nest calls on it once every provider exists: its checks against the app, and its line in the log. */
interface MountedRoute {
  readonly route: WebhooksRoute;
  onModuleInit(): void;
  onApplicationBootstrap(): void;
}

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

/** What the module reads of Nest's HTTP adapter. */
interface NestAdapter {
  getType(): string;
  getInstance(): unknown;
  /** Called by Nest at `app.init()` to add its body parsers, which keep the bytes as sent in `req.rawBody` with `rawBody: true`. */
  registerParserMiddleware(prefix?: string, rawBody?: boolean): unknown;
}

/**
 * Gives the module's controller its route and the request path it runs, as
 * providers are created: before Nest registers the app's routes, at `app.init()`.
 */
function mountRoute(controller: RouteController, options: WebhooksModuleOptions, host: HttpAdapterHost, discovery: DiscoveryService, config: ApplicationConfig): MountedRoute {
  checkRenamed(options, MOVED);
  const { path = '/webhooks', ...entry } = options;
  if (typeof path !== 'string' || !path.startsWith('/')) throw new WebhookOptionsError('svc-webhooks: WebhooksModule path must be a string that starts with /');
  const { tenants } = entry;
  if (typeof tenants === 'object' && tenants !== null && 'of' in tenants) {
    throw new WebhookOptionsError('svc-webhooks: WebhooksModule reads the tenant from its route (<path>/:tenant): tenants.of is not taken');
  }
  if (tenants === undefined) checkSecretGiven(entry.secret);
  const methods = handlersIn(discovery);
  const types = [...methods.where.keys()];
  const handsOff = entry.handoff !== undefined;
  if (!handsOff && types.length === 0) throw new WebhookOptionsError('svc-webhooks: WebhooksModule found no @OnWebhook method on a provider, and no handoff: nothing would run');
  // None in an application context: null, or undefined in the majors that leave it unset.
  const adapter = host.httpAdapter as NestAdapter | null | undefined;
  if (adapter == null) throw new WebhookOptionsError('svc-webhooks: WebhooksModule needs an HTTP application (NestFactory.create), not an application context');
  const platform = adapter.getType();
  if (platform !== 'express' && platform !== 'fastify') {
    throw new WebhookOptionsError(`svc-webhooks: WebhooksModule runs on @nestjs/platform-express or @nestjs/platform-fastify, not ${platform}`);
  }
  if (platform === 'express') refuseParsersBefore(adapter.getInstance() as ExpressApp);
  refuseParsersWithoutRawBody(adapter);
  // With a handoff the methods are the worker's: the request only queues.
  const runs = handsOff ? entry : { ...entry, on: methods.on };
  const of = (req: RouteRequest) => (req.params as { tenant?: string }).tenant;
  const receive = createPipeline({ ...runs, tenants: tenants && { ...tenants, of } } as PipelineOptions, nestPlatform(platform));
  const route = tenants !== undefined ? `${path.replace(/\/$/, '')}/:tenant` : path;
  controller.mount(route, receive);
  return {
    route: new WebhooksRoute(route, types),
    onModuleInit() {
      if (!handsOff && discovery.getProviders().some(({ instance }) => instance instanceof WebhooksWorker)) {
        throw new WebhookOptionsError(
          'svc-webhooks: WebhooksModule.forRoot runs the @OnWebhook methods in the request, as it has no handoff, and WebhooksModule.forWorker runs them for the jobs of a queue: ' +
            'give forRoot handoff: enqueue(...) of svc-webhooks/bullmq or svc-webhooks/pg-boss, for them to run in the worker alone, or leave forWorker out',
        );
      }
    },
    onApplicationBootstrap() {
      moduleLog.log(`Mapped {${servedPath(route, config)}, POST} route: ${handsOff ? handedOff(methods) : describeMethods(methods)}`);
    },
  };
}

/** What the route's line in the log says of a handoff: where the methods run, if the app has any. */
function handedOff(methods: WebhookMethods): string {
  const types = [...methods.where.keys()];
  return types.length === 0 ? 'each delivery to its queue' : `each delivery to its queue, whose worker (WebhooksModule.forWorker) runs the @OnWebhook methods of ${types.join(', ')}`;
}

/**
 * Fails the bootstrap, saying what the secret must be, where none was given
 * or it is empty: most often a variable that the configuration lacks, which
 * `ConfigService.get` answers `undefined`.
 */
function checkSecretGiven(secret: unknown): void {
  if (secret !== undefined && secret !== null && secret !== '' && !(Array.isArray(secret) && secret.length === 0)) return;
  throw new WebhookOptionsError(
    "svc-webhooks: WebhooksModule needs secret, the endpoint's signing secret: a non-empty string (whsec_…), or a non-empty list of them during a rotation " +
      "(e.g. config.getOrThrow<string>('WEBHOOK_SECRET') of ConfigService, which names a missing variable); or tenants, for many tenants",
  );
}

/**
 * The path the app serves `route` at, as Nest logs its own: below the
 * global prefix, unless the prefix excludes it.
 */
function servedPath(route: string, config: ApplicationConfig): string {
  const prefix = config.getGlobalPrefix().replace(/^\/+|\/+$/g, '');
  if (prefix === '') return route;
  const excluded = (config.getGlobalPrefixOptions().exclude ?? []).some(
    ({ requestMethod, pathRegex }) => (requestMethod === RequestMethod.ALL || requestMethod === RequestMethod.POST) && pathRegex.test(route),
  );
  return excluded ? route : `/${prefix}${route}`;
}

/**
 * Fails the app's `init()` where Nest adds its body parsers without
 * `rawBody: true`: they would leave the route no bytes as sent to verify.
 */
function refuseParsersWithoutRawBody(adapter: NestAdapter): void {
  // Nest tells its adapter alone whether it keeps the raw body: the module hears it there.
  const register = adapter.registerParserMiddleware;
  adapter.registerParserMiddleware = function (this: NestAdapter, prefix, rawBody) {
    if (rawBody !== true) {
      throw new WebhookOptionsError(
        'svc-webhooks: WebhooksModule verifies the bytes as sent, which Nest keeps beside the parsed body only with rawBody: true: ' +
          'create the app with NestFactory.create(AppModule, { rawBody: true })',
      );
    }
    return register.call(this, prefix, rawBody);
  };
}

/** What the module reads of an Express app: its stack of middleware (`router` in Express 5, `_router` in 4). */
interface ExpressApp {
  /** Express 4's, which makes `_router`; Express 5 has none. */
  readonly lazyrouter?: unknown;
  /** Express 4's router, once it is made. */
  readonly _router?: Router;
  /** Express 5's router; Express 4's getter throws. */
  readonly router: Router;
}

/** The stack of middleware of an Express router, each named for its function. */
interface Router {
  readonly stack: ReadonlyArray<{ readonly name: string }>;
}

const PARSERS = new Set(['jsonParser', 'urlencodedParser', 'textParser', 'rawParser']);

/** Fails the bootstrap where a body parser already runs on the Express app: Nest would add none of its own, which keep the bytes as sent. */
function refuseParsersBefore(app: ExpressApp): void {
  // Express 4 makes its router on first use (NestJS 10 makes none before).
  const stack = typeof app.lazyrouter === 'function' ? (app._router?.stack ?? []) : app.router.stack;
  const parser = stack.find((layer) => PARSERS.has(layer.name));
  if (parser === undefined) return;
  throw new WebhookOptionsError(
    `svc-webhooks: the Express app given to ExpressAdapter runs ${parser.name} before Nest's own parsers, which keep the bytes as sent that WebhooksModule verifies (rawBody: true): ` +
      "let Nest add its own parsers, with app.useBodyParser('json', options) for their options",
  );
}
