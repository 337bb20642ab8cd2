/**
 * A receiver's verify step when many tenants share one route: which tenant a
 * request is for (the `tenant` option), that tenant's secret (looked up and
 * cached, or one secret shared by all), and a failed lookup answered 503 and
 * reported like a failing store.
 */
import { WebhookVerificationError } from '../core/errors.js';
import { readHeader, type WebhookHeaders } from '../core/headers.js';
import type { ResolvedVerifyOptions } from '../core/options.js';
import type { WebhookPayload } from '../core/payload.js';
import { SecretLookup, type SecretLookupOptions, type SecretResolver } from '../core/secret-lookup.js';
import { decodeSecrets, type WebhookSecret } from '../core/secret.js';
import { verifyForTenant, type TenantKeySource } from '../core/tenant-webhooks.js';
import type { VerifiedDelivery } from '../core/verify-delivery.js';
import { tellStoreFailure, type StoreErrorReport } from './claim.js';
import { refused, type DecidedResponse } from './responses.js';
import { isThenable } from './user-callbacks.js';

/**
 * Which tenant's endpoint a request is for, read from the entry's request: a
 * route parameter in Express (`(req) => req.params.tenant`) or Hono
 * (`(c) => c.req.param('tenant')`), a path segment of a Fetch `Request`, the
 * Lambda event's `pathParameters`. Anything but a non-empty string
 * (`undefined`, `''`, a repeated parameter's array) is answered 404
 * `unknown_tenant` without a lookup.
 */
export type TenantOf<R> = (request: R) => unknown;

/** A verified delivery, or the refusal to answer instead. */
export type Verification = VerifiedDelivery | DecidedResponse;

/** Verifies a request for the tenant `tenantOf` names; never throws nor rejects. */
export type TenantVerify = (payload: WebhookPayload, headers: WebhookHeaders, tenantOf: () => unknown) => Verification | Promise<Verification>;

/** `Retry-After`, in seconds, on a 503 for a failed lookup: soon, like a failing store. */
export const LOOKUP_RETRY_AFTER_SECONDS = 5;

const TENANT_THREW_MESSAGE = "the tenant of this request could not be read; retry later";

/**
 * The verify step of a receiver with `tenant`: `secret` is a `SecretResolver`
 * (looked up and cached per `options`) or one secret every tenant shares. A
 * failed lookup, or a `tenant` function that threw, is told to the store
 * channel and to `report` as a `lookup` failure, and answered 503
 * `secret_unavailable` with `Retry-After`. Throws `TypeError` for bad options.
 */
export function createTenantVerify(
  secret: WebhookSecret | SecretResolver,
  options: SecretLookupOptions,
  verifyOptions: ResolvedVerifyOptions,
  report: StoreErrorReport,
): TenantVerify {
  const source: TenantKeySource =
    typeof secret === 'function' ? new SecretLookup(secret, { ...options, now: verifyOptions.now }) : sharedBy(decodeSecrets(secret));
  const retryAfter = { 'retry-after': String(LOOKUP_RETRY_AFTER_SECONDS) };

  /** The refusal for `error`; a failed lookup is reported first. */
  const refusal = (error: unknown, headers: WebhookHeaders, tenant: string | undefined): DecidedResponse => {
    if (!(error instanceof WebhookVerificationError) || error.code !== 'secret_unavailable') return refused(error);
    const id = readHeader(headers, 'webhook-id', ', ') ?? '';
    tellStoreFailure('lookup', id, 1, error.cause, tenant);
    void report(error.cause, tenant === undefined ? { operation: 'lookup', id } : { operation: 'lookup', id, tenant });
    return refused(error, retryAfter);
  };

  return (payload, headers, tenantOf) => {
    let tenant: unknown;
    try {
      tenant = tenantOf();
    } catch (cause) {
      return refusal(new WebhookVerificationError('secret_unavailable', TENANT_THREW_MESSAGE, { cause }), headers, undefined);
    }
    // Anything but a non-empty string is refused as unknown before a lookup: a failed lookup always has a tenant.
    const named = tenant as string;
    try {
      const verifying = verifyForTenant(source, verifyOptions, named, payload, headers);
      return isThenable(verifying) ? verifying.then(undefined, (error: unknown) => refusal(error, headers, named)) : verifying;
    } catch (error) {
      return refusal(error, headers, named);
    }
  };
}

/** One secret for every tenant: verification is tenant-scoped only for deduplication. */
function sharedBy(keys: ReturnType<typeof decodeSecrets>): TenantKeySource {
  return { keysOf: () => keys };
}
