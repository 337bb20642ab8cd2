/**
 * A receiver's verify step when many tenants share one route: which tenant a
 * request is for (the `tenant` option), that tenant's secret (looked up and
 * cached), and a failed lookup answered 503 and reported like a failing store.
 */
import { isThenable } from '../base/user-code.js';
import type { WebhookDelivery } from '../core/delivery.js';
import { WebhookTenantError } from '../core/errors.js';
import type { WebhookHeaders } from '../core/headers.js';
import type { ResolvedVerifyOptions } from '../core/options.js';
import type { WebhookPayload } from '../core/payload.js';
import { SecretLookup, type SecretLookupOptions, type SecretResolver } from '../core/secret-lookup.js';
import { matchForTenant } from '../core/tenant-webhooks.js';
import { readSignedRequest, type SignedRequest } from '../core/verify-delivery.js';
import { tellLookupFailure, type StoreErrorReport } from '../process/store-failures.js';
import { refused, RETRY_SOON, type DecidedResponse } from './responses.js';

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

/** A verified delivery, or the refusal to answer instead. */
export type Verification = WebhookDelivery | DecidedResponse;

/** Verifies a request for the tenant `tenantOf` names; never throws nor rejects. */
export type TenantVerify = (payload: WebhookPayload, headers: WebhookHeaders, tenantOf: () => unknown) => Verification | Promise<Verification>;

const TENANT_THREW_MESSAGE = 'the tenant of this request could not be read; retry later';

/**
 * The verify step of a receiver with `tenant`: `resolve` looks up each
 * tenant's secret, cached per `options`. A failed lookup, or a `tenant`
 * function that threw, is told to the secret lookup channel and to `report`
 * as a `lookup` failure, and answered 503 `secret_unavailable` with
 * `Retry-After`. Throws `WebhookOptionsError` for bad options.
 */
export function createTenantVerify(
  resolve: SecretResolver,
  options: SecretLookupOptions,
  verifyOptions: ResolvedVerifyOptions,
  report: StoreErrorReport,
): TenantVerify {
  const lookup = new SecretLookup(resolve, { ...options, now: verifyOptions.now });

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
      return isThenable(verifying) ? verifying.then(undefined, (error: unknown) => refusal(error, request.id, tenant as string)) : verifying;
    } catch (error) {
      return refusal(error, request.id, tenant as string);
    }
  };
  const tenantThrew = (cause: unknown, request: SignedRequest): DecidedResponse =>
    refusal(new WebhookTenantError('secret_unavailable', TENANT_THREW_MESSAGE, { cause }), request.id, undefined);

  return (payload, headers, tenantOf) => {
    // The checks that need no secret come first: a request that fails them costs neither the tenant function nor a lookup.
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
    if (!isThenable(tenant)) return verifyFor(request, tenant);
    return Promise.resolve(tenant).then(
      (named) => verifyFor(request, named),
      (cause: unknown) => tenantThrew(cause, request),
    );
  };
}
