/** Many tenants for `verify()` users: each tenant's secret looked up, and the tenant name's bounds. */
import type { WebhookDelivery } from './delivery.js';
import { WebhookTenantError } from './errors.js';
import type { WebhookEvent } from './event.js';
import type { WebhookHeaders } from './headers.js';
import { resolveVerifyOptions, type ResolvedVerifyOptions, type VerifyOptions } from './options.js';
import type { WebhookPayload } from './payload.js';
import { SecretLookup, type SecretLookupOptions, type SecretResolver, type TenantKeys } from './secret-lookup.js';
import { matchOnThisRuntime, readSignedRequest, type SignedRequest } from './verify-delivery.js';
import { isWellFormed } from './well-formed.js';

/** A delivery verified with its tenant's secret: `tenant` is always set. */
export interface TenantDelivery<E extends WebhookEvent = WebhookEvent> extends WebhookDelivery<E> {
  /** The tenant whose secret verified the delivery. */
  readonly tenant: string;
}

/** What `TenantWebhooks` takes: the verifier's options and the lookup's. */
export interface TenantWebhooksOptions extends VerifyOptions, SecretLookupOptions {}

/**
 * A verifier for many tenants behind one route, each with its own secret,
 * looked up through `resolve` and cached (see `SecretLookupOptions`). A
 * request is checked as far as it can be without a secret first (size,
 * headers, timestamp, the signature's shape): one that fails costs no lookup.
 * Throws `WebhookOptionsError` for a resolver or options that are not valid.
 */
export class TenantWebhooks {
  readonly #lookup: SecretLookup;
  readonly #options: ResolvedVerifyOptions;

  constructor(resolve: SecretResolver, options: TenantWebhooksOptions = {}) {
    this.#options = resolveVerifyOptions(options);
    this.#lookup = new SecretLookup(resolve, { ...options, now: this.#options.now });
  }

  /**
   * Verifies a request to `tenant`'s endpoint. Rejects with a
   * `WebhookVerificationError` for the checks of `verify()`, and a
   * `WebhookTenantError`: `unknown_tenant` (404) when the tenant has no
   * secret or is no tenant name, `secret_unavailable` (503, the lookup's
   * error as `cause`) when it could not be looked up.
   */
  async verifyDelivery(tenant: string, payload: WebhookPayload, headers: WebhookHeaders): Promise<TenantDelivery> {
    return verifyForTenant(this.#lookup, this.#options, tenant, payload, headers);
  }

  /** Verifies a request to `tenant`'s endpoint and returns its event. See `verifyDelivery`. */
  async verify(tenant: string, payload: WebhookPayload, headers: WebhookHeaders): Promise<WebhookEvent> {
    return (await this.verifyDelivery(tenant, payload, headers)).event;
  }
}

/** Where a tenant's keys come from: the lookup of the tenant's own secret. */
export interface TenantKeySource {
  keysOf(tenant: string): TenantKeys | Promise<TenantKeys>;
}

/**
 * The longest tenant name looked up, in UTF-16 code units: longer names are
 * unknown tenants, so forged requests cannot fill the secret cache with
 * names of any size.
 */
export const MAX_TENANT_LENGTH = 256;

/**
 * Whether `value` can name a tenant: a non-empty string of at most
 * `MAX_TENANT_LENGTH` code units that is well-formed UTF-16. A lone
 * surrogate encodes to no UTF-8, so it could be neither looked up nor logged
 * faithfully.
 */
export function isTenantName(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= MAX_TENANT_LENGTH && isWellFormed(value);
}

/**
 * The checks that need no secret, then the tenant's keys, then the
 * signature: at once when the keys are cached, else once they are looked up.
 * Throws (or rejects with) `WebhookVerificationError` or `WebhookTenantError`.
 */
export function verifyForTenant(
  source: TenantKeySource,
  options: ResolvedVerifyOptions,
  tenant: string,
  payload: WebhookPayload,
  headers: WebhookHeaders,
): TenantDelivery | Promise<TenantDelivery> {
  return matchForTenant(source, readSignedRequest(payload, headers, options), tenant);
}

/**
 * The signature check of a request that passed the checks needing no
 * secret, on the keys of `tenant`: `unknown_tenant` for a value that is no
 * tenant name (see `isTenantName`) without a lookup, or for a tenant
 * without a secret. Throws (or rejects with) `WebhookVerificationError` or
 * `WebhookTenantError`.
 */
export function matchForTenant(source: TenantKeySource, request: SignedRequest, tenant: unknown): TenantDelivery | Promise<TenantDelivery> {
  if (!isTenantName(tenant)) throw unknownTenant();
  const verified = (keys: TenantKeys): TenantDelivery | Promise<TenantDelivery> => {
    if (keys === null) throw unknownTenant();
    return matchOnThisRuntime(request, keys, tenant) as TenantDelivery | Promise<TenantDelivery>;
  };
  const keys = source.keysOf(tenant);
  return keys instanceof Promise ? keys.then(verified) : verified(keys);
}

function unknownTenant(): WebhookTenantError {
  return new WebhookTenantError('unknown_tenant', 'no endpoint is known for this tenant');
}
