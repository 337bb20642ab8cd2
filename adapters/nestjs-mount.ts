/** The webhook route of `forRoot` at bootstrap: its options checked, its request path built, its controller given the route, and its line in the log. */
import { RequestMethod } from '@nestjs/common';
import type { ApplicationConfig, DiscoveryService, HttpAdapterHost } from '@nestjs/core';
import { WebhookOptionsError } from '../src/base/options-error.js';
import type { KnownEventType } from '../src/core/event.js';
import { createPipeline, type PipelineOptions } from '../src/receive/pipeline.js';
import { handlersIn } from './nestjs-handlers.js';
import { describeHandoff, describeMethods, moduleLog } from './nestjs-log.js';
import { checkRouteOptions, type WebhooksModuleOptions } from './nestjs-options.js';
import { checkedPlatform } from './nestjs-platform-checks.js';
import { nestPlatform, type RouteController, type RouteRequest } from './nestjs-route.js';
import { WebhooksWorker } from './nestjs-worker.js';

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

/** The route, and the hooks Nest calls on it once every provider exists: its checks against the app, and its line in the log. */
export interface MountedRoute {
  readonly route: WebhooksRoute;
  onModuleInit(): void;
  onApplicationBootstrap(): void;
}

/**
 * Gives the module's controller its route and the request path it runs, as
 * providers are created: before Nest registers the app's routes, at `app.init()`.
 */
export function mountRoute(controller: RouteController, options: WebhooksModuleOptions, host: HttpAdapterHost, discovery: DiscoveryService, config: ApplicationConfig): MountedRoute {
  const { path, entry } = checkRouteOptions(options);
  const methods = handlersIn(discovery);
  const handsOff = entry.handoff !== undefined;
  if (!handsOff && methods.types.length === 0) throw new WebhookOptionsError('svc-webhooks: WebhooksModule found no @OnWebhook method on a provider, and no handoff: nothing would run');
  const platform = checkedPlatform(host);
  // With a handoff the methods are the worker's: the request only queues.
  const runs = handsOff ? entry : { ...entry, on: methods.on };
  const { tenants } = entry;
  const of = (req: RouteRequest) => (req.params as { tenant?: string }).tenant;
  const receive = createPipeline({ ...runs, tenants: tenants && { ...tenants, of } } as PipelineOptions, nestPlatform(platform));
  const route = tenants !== undefined ? `${path.replace(/\/$/, '')}/:tenant` : path;
  controller.mount(route, receive);
  return {
    route: new WebhooksRoute(route, methods.types),
    onModuleInit() {
      if (!handsOff && discovery.getProviders().some(({ instance }) => instance instanceof WebhooksWorker)) {
        throw new WebhookOptionsError(
          'svc-webhooks: WebhooksModule.forRoot runs the @OnWebhook methods in the request, as it has no handoff, and WebhooksModule.forWorker runs them for the jobs of a queue: ' +
            'give forRoot handoff: enqueue(...) of svc-webhooks/bullmq or svc-webhooks/pg-boss, for them to run in the worker alone, or leave forWorker out',
        );
      }
    },
    onApplicationBootstrap() {
      moduleLog.log(`Mapped {${servedPath(route, config)}, POST} route: ${handsOff ? describeHandoff(methods) : describeMethods(methods)}`);
    },
  };
}

/**
 * The path the app serves `route` at, as Nest logs its own: below the
 * global prefix, unless the prefix excludes it, joined as Nest joins them
 * (a leading slash added where missing, one trailing slash dropped).
 */
function servedPath(route: string, config: ApplicationConfig): string {
  const prefix = config.getGlobalPrefix();
  if (prefix === '') return route;
  const excluded = (config.getGlobalPrefixOptions().exclude ?? []).some(
    ({ requestMethod, pathRegex }) => (requestMethod === RequestMethod.ALL || requestMethod === RequestMethod.POST) && pathRegex.test(route),
  );
  if (excluded) return route;
  return `${prefix.startsWith('/') ? '' : '/'}${prefix.endsWith('/') ? prefix.slice(0, -1) : prefix}${route}`;
}
