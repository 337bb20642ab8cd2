import { Buffer } from 'node:buffer';
import { describe, expect, it } from 'vitest';
import { WebhookTenantError } from '../../src/core/errors.js';
import { SecretLookup, type SecretResolver } from '../../src/core/secret-lookup.js';
import { keyMaterialOf } from '../helpers/signed-request.js';
import { WebhookOptionsError } from '../../src/base/options-error.js';

const secretOf = (tenant: string): string => `whsec_${Buffer.from(`secret-of-${tenant}`).toString('base64')}`;

/** A resolver over `secrets` that counts its calls per tenant; `delayMs` makes each answer arrive later. */
function countingResolver(secrets: Map<string, string | undefined>, delayMs = 0) {
  const calls: string[] = [];
  const resolve: SecretResolver = async (tenant) => {
    calls.push(tenant);
    if (delayMs > 0) await new Promise((done) => setTimeout(done, delayMs));
    return secrets.get(tenant);
  };
  return { resolve, calls };
}

/** A clock the test moves by hand. */
function manualClock(start = 1_700_000_000_000) {
  let at = start;
  return { now: () => at, advance: (ms: number) => void (at += ms) };
}

describe('SecretLookup', () => {
  it("decodes a tenant's secret and reuses it within secretCacheMs, then looks it up again", async () => {
    const secrets = new Map([['acme', secretOf('acme')]]);
    const { resolve, calls } = countingResolver(secrets);
    const clock = manualClock();
    const lookup = new SecretLookup(resolve, { secretCacheMs: 1000, now: clock.now });

    expect(await lookup.keysOf('acme')).toEqual([{ id: '0', ...keyMaterialOf(secretOf('acme')) }]);
    clock.advance(999);
    // Cached: answered at once, not as a promise.
    expect(lookup.keysOf('acme')).toEqual([{ id: '0', ...keyMaterialOf(secretOf('acme')) }]);
    expect(calls).toEqual(['acme']);

    secrets.set('acme', secretOf('acme-rotated'));
    clock.advance(1);
    expect(await lookup.keysOf('acme')).toEqual([{ id: '0', ...keyMaterialOf(secretOf('acme-rotated')) }]);
    expect(calls).toEqual(['acme', 'acme']);
  });

  it('caches a tenant without a secret as null, for undefined and null alike', async () => {
    const calls: string[] = [];
    const lookup = new SecretLookup((tenant) => {
      calls.push(tenant);
      return tenant === 'ghost' ? null : undefined;
    });
    expect(await lookup.keysOf('nobody')).toBeNull();
    expect(await lookup.keysOf('ghost')).toBeNull();
    expect(lookup.keysOf('nobody')).toBeNull();
    expect(lookup.keysOf('ghost')).toBeNull();
    expect(calls).toEqual(['nobody', 'ghost']);
  });

  it('collapses concurrent lookups for one tenant into one call, and keeps tenants apart', async () => {
    const { resolve, calls } = countingResolver(new Map([['a', secretOf('a')], ['b', secretOf('b')]]), 20);
    const lookup = new SecretLookup(resolve);
    const answers = await Promise.all([...Array(50)].map((_, i) => lookup.keysOf(i % 2 === 0 ? 'a' : 'b')));
    expect(calls.sort()).toEqual(['a', 'b']);
    expect(answers[0]).toEqual([{ id: '0', ...keyMaterialOf(secretOf('a')) }]);
    expect(answers[1]).toEqual([{ id: '0', ...keyMaterialOf(secretOf('b')) }]);
  });

  it('keeps the list and the ids a resolver returns for a tenant in rotation', async () => {
    const lookup = new SecretLookup(() => [{ id: 'new', secret: secretOf('new') }, secretOf('old')]);
    expect(await lookup.keysOf('acme')).toEqual([
      { id: 'new', ...keyMaterialOf(secretOf('new')) },
      { id: '1', ...keyMaterialOf(secretOf('old')) },
    ]);
  });

  it('holds at most secretCacheSize tenants, dropping the least recently used', async () => {
    const { resolve, calls } = countingResolver(new Map([['a', secretOf('a')], ['b', secretOf('b')], ['c', secretOf('c')]]));
    const lookup = new SecretLookup(resolve, { secretCacheSize: 2 });
    await lookup.keysOf('a');
    await lookup.keysOf('b');
    lookup.keysOf('a'); // a is now the most recently used
    await lookup.keysOf('c'); // drops b
    expect(calls).toEqual(['a', 'b', 'c']);
    expect(lookup.keysOf('a')).not.toBeInstanceOf(Promise);
    expect(lookup.keysOf('c')).not.toBeInstanceOf(Promise);
    await lookup.keysOf('b');
    expect(calls).toEqual(['a', 'b', 'c', 'b']);
  });

  it.each<[string, SecretResolver]>([
    ['throws', () => {
      throw new Error('db down');
    }],
    ['rejects', () => Promise.reject(new Error('db down'))],
    ['answers no valid secret', () => 'whsec_***'],
    ['answers an empty list', () => []],
  ])('answers secret_unavailable with the cause when the resolver %s, and does not cache the failure', async (_, failing) => {
    let calls = 0;
    const lookup = new SecretLookup((tenant) => {
      calls++;
      return calls === 1 ? failing(tenant) : secretOf(tenant);
    });
    const error = await Promise.resolve(lookup.keysOf('acme')).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(WebhookTenantError);
    expect(error).toMatchObject({ code: 'secret_unavailable', status: 503 });
    expect((error as Error).cause).toBeInstanceOf(Error);
    expect((error as Error).message).toBe("the secret for this request's tenant could not be looked up; retry later");
    expect(await lookup.keysOf('acme')).toEqual([{ id: '0', ...keyMaterialOf(secretOf('acme')) }]);
    expect(calls).toBe(2);
  });

  it('cuts off a lookup that hangs after secretLookupTimeoutMs, for every request waiting on it, and looks up afresh after', async () => {
    let calls = 0;
    const lookup = new SecretLookup(
      () => {
        calls++;
        return calls === 1 ? new Promise<never>(() => {}) : secretOf('acme');
      },
      { secretLookupTimeoutMs: 50 },
    );
    const started = performance.now();
    const waiting = await Promise.allSettled([lookup.keysOf('acme'), lookup.keysOf('acme')]);
    expect(performance.now() - started).toBeGreaterThanOrEqual(45);
    for (const outcome of waiting) {
      expect(outcome.status).toBe('rejected');
      const { reason } = outcome as PromiseRejectedResult;
      expect(reason).toMatchObject({ code: 'secret_unavailable' });
      expect(String((reason as Error).cause)).toContain('longer than 50 ms');
    }
    expect(calls).toBe(1);
    expect(await lookup.keysOf('acme')).toEqual([{ id: '0', ...keyMaterialOf(secretOf('acme')) }]);
    expect(calls).toBe(2);
  });

  it.each([
    [{ secretCacheMs: 0 }, /secretCacheMs/],
    [{ secretCacheMs: 1.5 }, /secretCacheMs/],
    [{ secretLookupTimeoutMs: 0 }, /secretLookupTimeoutMs/],
    [{ secretLookupTimeoutMs: 2 ** 31 }, /secretLookupTimeoutMs/],
    [{ secretCacheSize: 0 }, /secretCacheSize/],
    [{ secretCacheSize: 2.5 }, /secretCacheSize/],
    [{ now: 5 as unknown as () => number }, /now/],
  ])('refuses %o with a TypeError', (options, message) => {
    expect(() => new SecretLookup(() => undefined, options)).toThrow(TypeError);
    expect(() => new SecretLookup(() => undefined, options)).toThrow(message);
  });

  it('refuses options that are not an object, naming the secret lookup', () => {
    for (const options of [null, 'fast', 5]) {
      expect(() => new SecretLookup(() => undefined, options as never)).toThrow(new WebhookOptionsError('svc-webhooks: secret lookup options must be an object'));
    }
  });

  it('refuses a resolver that is not a function', () => {
    expect(() => new SecretLookup('whsec_abc' as unknown as SecretResolver)).toThrow(new WebhookOptionsError('svc-webhooks: the secret resolver must be a function'));
  });

  it('holds a single tenant with secretCacheSize 1', async () => {
    const { resolve, calls } = countingResolver(new Map([['a', secretOf('a')], ['b', secretOf('b')]]));
    const lookup = new SecretLookup(resolve, { secretCacheSize: 1 });
    await lookup.keysOf('a');
    expect(lookup.keysOf('a')).not.toBeInstanceOf(Promise);
    await lookup.keysOf('b');
    expect(lookup.keysOf('b')).not.toBeInstanceOf(Promise);
    expect(lookup.keysOf('a')).toBeInstanceOf(Promise);
    expect(calls).toEqual(['a', 'b', 'a']);
  });
});
