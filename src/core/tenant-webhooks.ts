import { WebhookVerificationError } from './errors.js';
import type { WebhookEvent } from './event.js';
import type { WebhookHeaders } from './headers.js';
import { resolveVerifyOptions, type ResolvedVerifyOptions, type VerifyOptions } from './options.js';
import type { WebhookPayload } from './payload.js';
import { SecretLookup, type SecretLookupOptions, type SecretResolver, type TenantKeys } from './secret-lookup.js';
import { matchSignedRequest, readSignedRequest, type VerifiedDelivery } from './verify-delivery.js';

/** A delivery verified with its tenant's secret. */
export interface TenantDelivery<E extends WebhookEvent = WebhookEvent> extends VerifiedDelivery<E> {
  readonly tenant: string;
}

/** What `TenantWebhooks` takes: the verifier's options and the lookup's. */
export interface TenantWebhooksOptions extends VerifyOptions, SecretLookupOptions {}

/**
 * A verifier for many tenants behind one route, each with its own secret,
 * looked up through `resolve` and cached (see `SecretLookupOptions`). A
 * request is checked as far as it can be without a secret first (size,
 * headers, timestamp, the signature's shape): one that fails costs no lookup.
 * Throws `TypeError` for a resolver or options that are not valid.
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
   * `WebhookVerificationError`: the checks of `verify()`, `unknown_tenant`
   * (404) when the tenant has no secret, `secret_unavailable` (503, the
   * lookup's error as `cause`) when it could not be looked up.
   */
  async verifyDelivery(tenant: string, payload: WebhookPayload, headers: WebhookHeaders): Promise<TenantDelivery> {
    return verifyForTenant(this.#lookup, this.#options, tenant, payload, headers);
  }

  /** Verifies a request to `tenant`'s endpoint and returns its event. See `verifyDelivery`. */
  async verify(tenant: string, payload: WebhookPayload, headers: WebhookHeaders): Promise<WebhookEvent> {
    return (await this.verifyDelivery(tenant, payload, headers)).event;
  }
}

/** Where a tenant's keys come from: a lookup, or one secret shared by every tenant. */
export interface TenantKeySource {
  keysOf(tenant: string): TenantKeys | Promise<TenantKeys>;
}

/**
 * The checks that need no secret, then the tenant's keys, then the
 * signature: at once when the keys are cached, else once they are looked up.
 * Throws (or rejects with) `WebhookVerificationError`.
 */
export function verifyForTenant(
  source: TenantKeySource,
  options: ResolvedVerifyOptions,
  tenant: string,
  payload: WebhookPayload,
  headers: WebhookHeaders,
): TenantDelivery | Promise<TenantDelivery> {
  if (typeof tenant !== 'string' || tenant.length === 0) throw unknownTenant();
  const request = readSignedRequest(payload, headers, options);
  const verified = (keys: TenantKeys): TenantDelivery => {
    if (keys === null) throw unknownTenant();
    return { ...matchSignedRequest(request, keys), tenant };
  };
  const keys = source.keysOf(tenant);
  return keys instanceof Promise ? keys.then(verified) : verified(keys);
}

function unknownTenant(): WebhookVerificationError {
  return new WebhookVerificationError('unknown_tenant', 'no endpoint is known for this tenant');
}
