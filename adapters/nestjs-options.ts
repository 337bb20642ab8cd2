/** The options of svc-webhooks/nestjs's `forRoot` and `forRootAsync`, and the module's own checks of them at bootstrap. */
import { checkRenamed } from '../src/base/option-checks.js';
import { WebhookOptionsError } from '../src/base/options-error.js';
import type { EventSchemas } from '../src/process/handler-types.js';
import type { EntryOptions } from '../src/receive/pipeline.js';
import type { SingleEndpoint } from '../src/receive/receiver.js';
import type { TenantsOptions } from '../src/receive/tenants.js';
import type { HandlersMode, HandoffMode } from '../src/receive/what-runs.js';
import { checkOptionsWithoutOn } from './nestjs-handlers.js';

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

/** The options checked: the route's path, with its default, apart from the entry's. */
export interface CheckedOptions {
  readonly path: string;
  readonly entry: Omit<WebhooksModuleOptions, 'path'>;
}

/**
 * Checks what the module reads of `options` itself (no `on`, the route's
 * path, the tenants without `of`, a secret given); the entry's options are
 * the pipeline's to check. Throws `WebhookOptionsError`.
 */
export function checkRouteOptions(options: WebhooksModuleOptions): CheckedOptions {
  checkOptionsWithoutOn('WebhooksModule.forRoot', options, 'secret or tenants');
  checkRenamed(options, MOVED);
  const { path = '/webhooks', ...entry } = options;
  if (typeof path !== 'string' || !path.startsWith('/')) throw new WebhookOptionsError('svc-webhooks: WebhooksModule path must be a string that starts with /');
  const { tenants } = entry;
  if (typeof tenants === 'object' && tenants !== null && 'of' in tenants) {
    throw new WebhookOptionsError('svc-webhooks: WebhooksModule reads the tenant from its route (<path>/:tenant): tenants.of is not taken');
  }
  if (tenants === undefined) checkSecretGiven(entry.secret);
  return { path, entry };
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
 * The options of `forRootAsync` or `forWorkerAsync` (`method`), checked where they are given: an object with a
 * `useFactory` function. Nest would otherwise fail the bootstrap with an error of its own, or the call throw a
 * `TypeError`. Throws `WebhookOptionsError`.
 */
export function checkAsyncOptions<O extends { readonly useFactory: unknown }>(method: string, options: O): O {
  if (options === null || typeof options !== 'object' || typeof options.useFactory !== 'function') {
    throw new WebhookOptionsError(`svc-webhooks: WebhooksModule.${method} needs options with useFactory, a function that returns the module's options`);
  }
  return options;
}
