/**
 * svc-webhooks/nestjs: `WebhooksModule.forRoot(options)` (or `forRootAsync`)
 * registers the webhook route, `POST /webhooks` by default, on the app's
 * platform, Express or Fastify, before Nest adds its body parsers: the route
 * reads the raw body itself, so no `rawBody: true` is needed. Provider methods
 * decorated `@OnWebhook('call.missed')` are found at bootstrap and run as the
 * handlers of `on` do elsewhere, under the dedup claim; or `handoff` hands
 * each delivery to a queue. A misconfiguration fails the bootstrap with a
 * `TypeError` that names the fix.
 * @packageDocumentation
 */
import type { DynamicModule, FactoryProvider, ModuleMetadata, Provider } from '@nestjs/common';
import { DiscoveryModule, DiscoveryService, HttpAdapterHost } from '@nestjs/core';
import type { Request } from 'express';
import type { FastifyRequest } from 'fastify';
import type { KnownEventType } from '../src/core/event.js';
import type { EventSchemas, HandlerOptions } from '../src/process/handler-types.js';
import type { Handoff } from '../src/process/handoff.js';
import { checkRenamed } from '../src/base/option-checks.js';
import type { EntryOptions } from '../src/receive/pipeline.js';
import type { SingleEndpoint } from '../src/receive/receiver.js';
import type { TenantsOptions } from '../src/receive/tenants.js';
import { verifyWebhook as expressWebhook, type ExpressWebhookOptions } from './express.js';
import { verifyWebhook as fastifyWebhook, type FastifyWebhookOptions } from './fastify.js';
import { handlersIn } from './nestjs-handlers.js';

export { OnWebhook, type OnWebhookDecorator, type WebhookMethod } from './nestjs-handlers.js';

/** The module's options besides its secret: the entry's, where the route is, and `handoff` or the options of the decorated handlers. */
export interface WebhooksModuleEntryOptions extends EntryOptions, Partial<Omit<HandlerOptions<EventSchemas>, 'on'>> {
  /**
   * The webhook route's path, outside Nest's global prefix.
   * @default '/webhooks'
   */
  readonly path?: string;
  /**
   * Hands each verified delivery to a queue (`enqueue()` of `svc-webhooks/bullmq`
   * or `svc-webhooks/pg-boss`) in place of `@OnWebhook` methods, whose worker
   * runs the handlers.
   * @default undefined (the `@OnWebhook` methods run)
   */
  readonly handoff?: Handoff;
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

/** The module's options: exactly one of `secret` (one endpoint) or `tenants`, and the rest. */
export type WebhooksModuleOptions = WebhooksModuleEntryOptions & (SingleEndpoint | WebhooksModuleTenants);

/** Options of rc.1 by the place they have now: a caller that still gives one is told, not ignored. */
const MOVED = { tenant: 'tenants, with tenants.secret: the route is then <path>/:tenant' } as const;

/** `forRootAsync`'s options: the options from a factory, with what it injects (a `ConfigService`, a store). */
export interface WebhooksModuleAsyncOptions extends Pick<ModuleMetadata, 'imports'> {
  /** Builds the options, with the providers of `inject` as its arguments. */
  readonly useFactory: (...injected: never[]) => WebhooksModuleOptions | Promise<WebhooksModuleOptions>;
  /**
   * The tokens of the providers `useFactory` takes, in order.
   * @default []
   */
  readonly inject?: FactoryProvider['inject'];
}

/** The token of the options. */
const OPTIONS = Symbol('svc-webhooks options');

/** The webhook route the module registered: a provider it exports, for `app.get(WebhooksRoute)` or to inject. */
export class WebhooksRoute {
  /** The path the route answers at. */
  readonly path: string;
  /** The event types the decorated methods handle. */
  readonly types: readonly KnownEventType[];

  /** Built by the module at bootstrap. */
  constructor(path: string, types: readonly KnownEventType[]) {
    this.path = path;
    this.types = types;
  }
}

/** The module that registers the webhook route and finds the `@OnWebhook` methods. */
export class WebhooksModule {
  /** The module with `options`. */
  static forRoot(options: WebhooksModuleOptions): DynamicModule {
    return moduleWith([], { provide: OPTIONS, useValue: options });
  }

  /** The module with the options `useFactory` builds, once the providers it injects are ready. */
  static forRootAsync({ imports = [], useFactory, inject = [] }: WebhooksModuleAsyncOptions): DynamicModule {
    return moduleWith(imports, { provide: OPTIONS, useFactory, inject });
  }
}

function moduleWith(imports: NonNullable<ModuleMetadata['imports']>, options: Provider): DynamicModule {
  return {
    module: WebhooksModule,
    imports: [DiscoveryModule, ...imports],
    providers: [options, { provide: WebhooksRoute, useFactory: mountRoute, inject: [OPTIONS, HttpAdapterHost, DiscoveryService] }],
    exports: [WebhooksRoute],
  };
}

/**
 * Registers the route on the platform's own app, as providers are created:
 * before Nest registers its body parsers and routes, at `app.init()`.
 */
function mountRoute(options: WebhooksModuleOptions, host: HttpAdapterHost, discovery: DiscoveryService): WebhooksRoute {
  checkRenamed(options, MOVED);
  const { path = '/webhooks', ...entry } = options;
  if (typeof path !== 'string' || !path.startsWith('/')) throw new TypeError('svc-webhooks: WebhooksModule path must be a string that starts with /');
  const { tenants } = entry;
  if (typeof tenants === 'object' && tenants !== null && 'of' in tenants) {
    throw new TypeError('svc-webhooks: WebhooksModule reads the tenant from its route (<path>/:tenant): tenants.of is not taken');
  }
  const on = handlersIn(discovery);
  const types = Object.keys(on) as KnownEventType[];
  if (entry.handoff !== undefined && types.length > 0) throw new TypeError(`svc-webhooks: WebhooksModule takes handoff or @OnWebhook methods, not both (found @OnWebhook for ${types.join(', ')})`);
  if (entry.handoff === undefined && types.length === 0) throw new TypeError('svc-webhooks: WebhooksModule found no @OnWebhook method on a provider, and no handoff: nothing would run');
  const runs = entry.handoff === undefined ? { ...entry, on } : entry;
  // None in an application context: null, or undefined in the majors that leave it unset.
  const adapter = host.httpAdapter as { getType(): string; getInstance(): unknown } | null | undefined;
  if (adapter == null) throw new TypeError('svc-webhooks: WebhooksModule needs an HTTP application (NestFactory.create), not an application context');
  const route = tenants !== undefined ? `${path.replace(/\/$/, '')}/:tenant` : path;
  const platform = adapter.getType();
  if (platform === 'express') {
    const app = adapter.getInstance() as ExpressApp;
    refuseParsersBefore(app);
    app.post(route, expressWebhook({ ...runs, tenants: tenants && { ...tenants, of: (req: Request) => req.params.tenant } } as ExpressWebhookOptions));
  } else if (platform === 'fastify') {
    const app = adapter.getInstance() as { register(plugin: unknown): unknown };
    const tenantOf = (request: FastifyRequest): string | undefined => (request.params as { tenant?: string }).tenant;
    app.register(fastifyWebhook({ ...runs, path: route, tenants: tenants && { ...tenants, of: tenantOf } } as FastifyWebhookOptions));
  } else {
    throw new TypeError(`svc-webhooks: WebhooksModule runs on @nestjs/platform-express or @nestjs/platform-fastify, not ${platform}`);
  }
  return new WebhooksRoute(route, types);
}

/** What the module reads of an Express app: its routes, and its stack of middleware (`router` in Express 5, `_router` in 4). */
interface ExpressApp {
  post(path: string, handler: unknown): unknown;
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

/** Fails the bootstrap where a body parser already runs on the Express app, before the route could read the body. */
function refuseParsersBefore(app: ExpressApp): void {
  // Express 4 makes its router on first use, which may be this route's (NestJS 10 makes none before).
  const stack = typeof app.lazyrouter === 'function' ? (app._router?.stack ?? []) : app.router.stack;
  const parser = stack.find((layer) => PARSERS.has(layer.name));
  if (parser === undefined) return;
  throw new TypeError(
    `svc-webhooks: the Express app given to ExpressAdapter runs ${parser.name} before WebhooksModule's route, which must read the raw body: ` +
      'add the parser to the app after NestFactory.create (app.use), or let Nest add its own (the default bodyParser: true)',
  );
}
