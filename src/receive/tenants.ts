/**
 * A receiver's verify step when many tenants share one route: which tenant a
 * request is for (`tenants.of`), that tenant's secret (looked up and
 * cached), and a failed lookup answered 503 and reported to `onLookupError`.
 */
import { whenSettled } from '../base/user-code.js';
import type { WebhookDelivery } from '../core/delivery.js';
import { WebhookTenantError } from '../core/errors.js';
import type { WebhookHeaders } from '../core/headers.js';
import type { ResolvedVerifyOptions } from '../core/options.js';
import type { WebhookPayload } from '../core/payload.js';
import { SecretLookup, type LookupOptionNames, type SecretResolver } from '../core/secret-lookup.js';
import { matchForTenant } from '../core/tenant-webhooks.js';
import { readSignedRequest, type SignedRequest } from '../core/verify-delivery.js';
import { tellLookupFailure, type LookupErrorCallback, type LookupErrorReport } from '../process/store-failures.js';
import { refused, RETRY_SOON, type DecidedResponse } from './responses.js';
import { WebhookOptionsError } from '../base/options-error.js';

/**
 * Which tenant's endpoint a request is for, read from the entry's request: a
 * route parameter in Express (`(req) => req.params.tenant`) or Hono
 * (`(c) => c.req.param('tenant')`), a path segment of a Fetch `Request`, the
 * Lambda event's `pathParameters`; or a promise of one. It is read only for a
 * request that passed every check needing no secret. Anything but a
 * non-empty, well-formed string of at most 256 characters (`undefined`, `''`,
 * a repeated parameter's array) is answered 404 `unknown_tenant` without a
 * lookup.
 */
export type TenantOf<R> = (request: R) => unknown;

/**
 * Many tenants behind one route, each with its own secret: the entry's
 * `tenants` option, in place of `secret`. `R` is the entry's request.
 */
export interface TenantsOptions<R> {
  /**
   * Which tenant's endpoint a request is for, read from the entry's request
   * (see `TenantOf`). The tenant reaches the delivery as `tenant`. Required.
   */
  readonly of: TenantOf<R>;
  /**
   * A tenant's secret, or `undefined` for an unknown tenant (answered 404
   * `unknown_tenant`): looked up only for requests that pass every check
   * that needs no secret, and cached per `cacheMs`, `lookupTimeoutMs` and
   * `cacheSize`. Required.
   */
  readonly secret: SecretResolver;
  /**
   * How long, in milliseconds, a tenant's secret, or the finding that it has
   * none, is reused before it is looked up again: a secret changed at its
   * source is accepted, and the old one refused, at most this long after.
   * @default 60000
   */
  readonly cacheMs?: number;
  /**
   * How long, in milliseconds, a lookup may take. Past it the requests
   * waiting on it are answered 503 `secret_unavailable`, and the next
   * request for the tenant looks it up afresh.
   * @default 2000
   */
  readonly lookupTimeoutMs?: number;
  /**
   * How many tenants' answers the cache holds; past it the least recently
   * used is dropped.
   * @default 10000
   */
  readonly cacheSize?: number;
  /**
   * Told about every lookup that failed, took longer than `lookupTimeoutMs`
   * or answered no valid secret, and every `of` that threw or rejected, with
   * the request's `webhook-id` and the tenant (the request is answered 503
   * `secret_unavailable`). Awaited; what it throws is logged and changes nothing.
   * @default logs one line to `logger` naming the error; at most one line per 5 s while the lookups keep failing
   */
  readonly onLookupError?: LookupErrorCallback;
}

/** `TenantsOptions` named as a receiver's members, for the messages. */
const TENANTS_NAMES: LookupOptionNames = { secretCacheMs: 'tenants.cacheMs', secretLookupTimeoutMs: 'tenants.lookupTimeoutMs', secretCacheSize: 'tenants.cacheSize' };

/** A verified delivery, or the refusal to answer instead. */
export type Verification = WebhookDelivery | DecidedResponse;

/** Verifies a request for the tenant `tenantOf` names; never throws nor rejects. */
export type TenantVerify = (payload: WebhookPayload, headers: WebhookHeaders, tenantOf: () => unknown) => Verification | Promise<Verification>;

const TENANT_THREW_MESSAGE = 'the tenant of this request could not be read; retry later';

/**
 * The verify step of a receiver with `tenants`: each tenant's secret looked
 * up, cached per `tenants`. A failed lookup, or an `of` that threw, is told
 * to the secret lookup channel and to `report`, and answered 503
 * `secret_unavailable` with `Retry-After`. Throws `WebhookOptionsError` for bad options.
 */
export function createTenantVerify(
  tenants: TenantsOptions<never>,
  verifyOptions: ResolvedVerifyOptions,
  report: LookupErrorReport,
): TenantVerify {
  const { secret, cacheMs, lookupTimeoutMs, cacheSize } = tenants;
  if (typeof secret !== 'function') {
    throw new WebhookOptionsError(
      'svc-webhooks: tenants.secret must be a function from the tenant to its secret: a secret shared by every ' +
        'tenant proves nothing about the tenant a request names, so any request could name any tenant',
    );
  }
  const lookup = new SecretLookup(secret, { secretCacheMs: cacheMs, secretLookupTimeoutMs: lookupTimeoutMs, secretCacheSize: cacheSize, now: verifyOptions.now }, TENANTS_NAMES);

  /** The refusal for `error`; a failed lookup is reported first. */
  const refusal = (error: unknown, id: string, tenant: string | undefined): DecidedResponse => {
    if (!(error instanceof WebhookTenantError) || error.code !== 'secret_unavailable') return refused(error);
    tellLookupFailure(id, tenant, error.cause);
    void report(error.cause, tenant === undefined ? { operation: 'lookup', id } : { operation: 'lookup', id, tenant });
    return refused(error, RETRY_SOON);
  };

  /** Verifies `request` for the tenant `tenant` names. */
  const verifyFor = (request: SignedRequest, tenant: unknown): Verification | Promise<Verification> => {
    try {
      const verifying = matchForTenant(lookup, request, tenant);
      return whenSettled(verifying, (verified) => verified, (error: unknown) => refusal(error, request.id, tenant as string));
    } catch (error) {
      return refusal(error, request.id, tenant as string);
    }
  };
  const tenantThrew = (cause: unknown, request: SignedRequest): DecidedResponse =>
    refusal(new WebhookTenantError('secret_unavailable', TENANT_THREW_MESSAGE, { cause }), request.id, undefined);

  return (payload, headers, tenantOf) => {
    // The checks that need no secret come first: a request that fails them costs neither `tenants.of` nor a lookup.
    let request: SignedRequest;
    let tenant: unknown;
    try {
      request = readSignedRequest(payload, headers, verifyOptions);
    } catch (error) {
      return refused(error);
    }
    try {
      tenant = tenantOf();
    } catch (cause) {
      return tenantThrew(cause, request);
    }
    return whenSettled(
      tenant,
      (named) => verifyFor(request, named),
      (cause: unknown) => tenantThrew(cause, request),
    );
  };
}
