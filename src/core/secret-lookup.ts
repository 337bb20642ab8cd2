/**
 * Secrets looked up per tenant, for receivers that serve many endpoints on
 * one route: each tenant's answer is cached for a while (an unknown tenant
 * too, so forged requests to made-up tenants cost one lookup each, not one
 * per request), concurrent lookups for one tenant share a single call, a
 * lookup that hangs is cut off, and the cache holds a bounded number of
 * tenants, the least recently used leaving first.
 */
import { beforeDeadline } from '../base/deadlines.js';
import { checkCallback, checkDuration, checkOptionsObject, MAX_TIMER_MS } from '../base/option-checks.js';
import { WebhookTenantError } from './errors.js';
import { decodeSecrets, type DecodedKey, type WebhookSecret } from './secret.js';
import { WebhookOptionsError } from '../base/options-error.js';

/**
 * Finds a tenant's secret: what `secret` takes when there is one tenant (a
 * string, `{ id, secret }`, or a list of them during that tenant's rotation),
 * or `undefined` (or `null`) for a tenant that has none. May be async.
 */
export type SecretResolver = (
  tenant: string,
) => WebhookSecret | null | undefined | PromiseLike<WebhookSecret | null | undefined>;

/** How looked-up secrets are kept. */
export interface SecretLookupOptions {
  /**
   * How long, in milliseconds, a tenant's secret, or the finding that it has
   * none, is reused before it is looked up again: a secret changed at its
   * source is accepted, and the old one refused, at most this long after.
   * @default 60000
   */
  readonly secretCacheMs?: number;
  /**
   * How long, in milliseconds, a lookup may take. Past it the requests
   * waiting on it are answered 503 `secret_unavailable`, and the next
   * request for the tenant looks it up afresh.
   * @default 2000
   */
  readonly secretLookupTimeoutMs?: number;
  /**
   * How many tenants' answers the cache holds; past it the least recently
   * used is dropped.
   * @default 10000
   */
  readonly secretCacheSize?: number;
  /**
   * The clock the cache's ages are read from, in milliseconds since the Unix epoch.
   * @default Date.now
   */
  readonly now?: () => number;
}

/** What the caller named each option of the cache, for the messages. */
export type LookupOptionNames = Readonly<Record<'secretCacheMs' | 'secretLookupTimeoutMs' | 'secretCacheSize', string>>;

const SAME_NAMES: LookupOptionNames = { secretCacheMs: 'secretCacheMs', secretLookupTimeoutMs: 'secretLookupTimeoutMs', secretCacheSize: 'secretCacheSize' };

/** A tenant's decoded keys, or `null` for a tenant without a secret. */
export type TenantKeys = readonly DecodedKey[] | null;

interface Cached {
  readonly keys: TenantKeys;
  readonly until: number;
}

const UNAVAILABLE_MESSAGE = "the secret for this request's tenant could not be looked up; retry later";

/** The cache and its lookups. Options are checked once, here; throws `WebhookOptionsError`. */
export class SecretLookup {
  readonly #resolve: SecretResolver;
  readonly #cacheMs: number;
  readonly #timeoutMs: number;
  readonly #size: number;
  readonly #now: () => number;
  // A Map keeps insertion order: a hit moves its tenant to the end, so the first key is the least recently used.
  readonly #cache = new Map<string, Cached>();
  readonly #pending = new Map<string, Promise<TenantKeys>>();

  /** `named` names the options in messages as the caller gave them (a receiver's `tenants.cacheMs`). */
  constructor(resolve: SecretResolver, options: SecretLookupOptions = {}, named: LookupOptionNames = SAME_NAMES) {
    if (typeof resolve !== 'function') throw new WebhookOptionsError('svc-webhooks: the secret resolver must be a function');
    checkOptionsObject('secret lookup', options);
    const { secretCacheMs = 60_000, secretLookupTimeoutMs = 2000, secretCacheSize = 10_000, now = Date.now } = options;
    checkDuration(named.secretCacheMs, secretCacheMs);
    checkDuration(named.secretLookupTimeoutMs, secretLookupTimeoutMs, MAX_TIMER_MS);
    if (!Number.isSafeInteger(secretCacheSize) || secretCacheSize < 1) {
      throw new WebhookOptionsError(`svc-webhooks: ${named.secretCacheSize} must be a positive integer`);
    }
    checkCallback('now', now);
    this.#resolve = resolve;
    this.#cacheMs = secretCacheMs;
    this.#timeoutMs = secretLookupTimeoutMs;
    this.#size = secretCacheSize;
    this.#now = now;
  }

  /**
   * The tenant's keys: at once from the cache, else once the lookup (shared
   * with every request for the tenant meanwhile) answered. Rejects with
   * `secret_unavailable` (its `cause` the lookup's error) when the lookup
   * failed, took too long or answered no valid secret; a failure is not cached.
   */
  keysOf(tenant: string): TenantKeys | Promise<TenantKeys> {
    const cached = this.#cache.get(tenant);
    if (cached !== undefined) {
      this.#cache.delete(tenant);
      if (cached.until > this.#now()) {
        this.#cache.set(tenant, cached);
        return cached.keys;
      }
    }
    let pending = this.#pending.get(tenant);
    if (pending === undefined) {
      pending = this.#lookUp(tenant);
      this.#pending.set(tenant, pending);
    }
    return pending;
  }

  async #lookUp(tenant: string): Promise<TenantKeys> {
    try {
      const resolving = new Promise<Awaited<ReturnType<SecretResolver>>>((resolve) => resolve(this.#resolve(tenant)));
      const found = await beforeDeadline(resolving, this.#timeoutMs, () => {
        throw new Error(`the secret lookup took longer than ${this.#timeoutMs} ms`);
      });
      const keys = found === undefined || found === null ? null : decodeSecrets(found);
      this.#remember(tenant, keys);
      return keys;
    } catch (cause) {
      throw new WebhookTenantError('secret_unavailable', UNAVAILABLE_MESSAGE, { cause });
    } finally {
      this.#pending.delete(tenant);
    }
  }

  #remember(tenant: string, keys: TenantKeys): void {
    if (this.#cache.size >= this.#size) this.#cache.delete(this.#cache.keys().next().value!);
    this.#cache.set(tenant, { keys, until: this.#now() + this.#cacheMs });
  }
}
