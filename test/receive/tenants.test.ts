/** Many tenants behind one receiver: the tenant read from the request, its secret looked up, deduplication scoped by it. */
import { Buffer } from 'node:buffer';
import diagnostics from 'node:diagnostics_channel';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SECRET_LOOKUP_CHANNEL, type SecretLookupMessage } from '../../src/process/diagnostics.js';
import type { LookupErrorContext } from '../../src/process/store-failures.js';
import { MemoryDedupStore } from '../../src/stores/memory-dedup-store.js';
import { createPipeline, type PipelineOptions } from '../../src/receive/pipeline.js';
import type { WebhookResponse } from '../../src/receive/responses.js';
import type { TenantsOptions } from '../../src/receive/tenants.js';
import { decidedAnswers } from '../helpers/decided-answers.js';
import { hearDeliveries } from '../helpers/heard-traces.js';
import { deliveryOf, keyOf, now, SECRET, signedRequest, type SignedRequest } from '../helpers/signed-request.js';
import { TestDedupStore } from '../helpers/test-dedup-store.js';
import { WebhookOptionsError } from '../../src/base/options-error.js';

const secretOf = (tenant: string): string => `whsec_${Buffer.from(`secret-of-${tenant}`).toString('base64')}`;

/** A signed request to `tenant`'s endpoint. */
type TenantRequest = SignedRequest & { readonly tenant?: string };
const toTenant = (tenant: string | undefined, id = 'evt_1'): TenantRequest => ({ ...signedRequest({ id, secret: secretOf(tenant ?? '') }), tenant });

/** A pipeline's options, with `tenants` over the test's own: each tenant's secret, the tenant read from the request. */
type TenantPipelineOptions = Partial<Omit<PipelineOptions, 'tenants'>> & { readonly tenants?: Partial<TenantsOptions<TenantRequest>> };

/** A pipeline of many tenants; `{ secret, tenants: undefined }` makes it one of a single endpoint. */
function tenantPipeline(options: TenantPipelineOptions) {
  const runs: unknown[][] = [];
  const { tenants, ...rest } = options;
  const receive = createPipeline<TenantRequest, WebhookResponse>(
    {
      tenants:
        'tenants' in options && tenants === undefined
          ? undefined
          : {
              secret: (tenant: string) => (tenant.startsWith('known') ? secretOf(tenant) : undefined),
              of: (request: TenantRequest) => request.tenant,
              ...tenants,
            },
      now,
      on: { 'call.missed': (event: { id: string }, delivery: unknown) => void runs.push([event.id, delivery]) },
      ...rest,
    } as PipelineOptions,
    decidedAnswers(),
  );
  return { receive, runs };
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('a receiver of many tenants', () => {
  it('runs the same event id once for each tenant, and tells the handler the tenant', async () => {
    const dedup = new TestDedupStore();
    const { receive, runs } = tenantPipeline({ dedup: { store: dedup } });
    expect(await receive(toTenant('known-a'))).toMatchObject({ status: 204 });
    expect(await receive(toTenant('known-b'))).toMatchObject({ status: 204 });
    expect(await receive(toTenant('known-a'))).toMatchObject({ status: 200, body: { duplicate: true } });
    expect(runs).toEqual([
      ['evt_1', deliveryOf({ secret: secretOf('known-a'), tenant: 'known-a' })],
      ['evt_1', deliveryOf({ secret: secretOf('known-b'), tenant: 'known-b' })],
    ]);
    expect(dedup.stateOf(keyOf('evt_1', secretOf('known-a')))).toBe('done');
    expect(dedup.stateOf(keyOf('evt_1', secretOf('known-b')))).toBe('done');
    expect(dedup.stateOf('evt_1')).toBe('absent');
  });

  it('runs a delivery replayed to other tenant names that resolve to the same secret once, under the name that came first', async () => {
    // A resolver that reads names in any letter case: every spelling of known-a is one endpoint, one secret.
    const { receive, runs } = tenantPipeline({ tenants: { secret: (tenant: string) => secretOf(tenant.toLowerCase()) } });
    const signed = signedRequest({ secret: secretOf('known-a') });
    const names = ['known-a', 'KNOWN-A', 'Known-A', 'known-A', 'kNOWN-a', 'KNOWN-a', 'known-a', 'KnOwN-a'];
    const answers = [];
    for (const tenant of names) answers.push(await receive({ ...signed, tenant }));
    expect(answers.map((answer) => answer?.status)).toEqual([204, 200, 200, 200, 200, 200, 200, 200]);
    expect(runs).toEqual([['evt_1', expect.objectContaining({ tenant: 'known-a' })]]);
  });

  it('refuses one secret shared by every tenant at creation: it proves nothing about the tenant a request names', () => {
    expect(() => tenantPipeline({ tenants: { secret: SECRET as never } })).toThrow(
      new WebhookOptionsError(
        'svc-webhooks: tenants.secret must be a function from the tenant to its secret: a secret shared by every ' +
          'tenant proves nothing about the tenant a request names, so any request could name any tenant',
      ),
    );
  });

  it('keeps apart, in a store shared with a receiver of one endpoint, an event whose id holds a colon', async () => {
    const dedup = new MemoryDedupStore({ now });
    // Event "b" for tenant "known-a", and event "known-a:b" for the endpoint of SECRET: the keys of an older scheme met.
    const tenantRuns = tenantPipeline({ dedup: { store: dedup } });
    const single = tenantPipeline({ dedup: { store: dedup }, secret: SECRET, tenants: undefined });
    expect(await tenantRuns.receive(toTenant('known-a', 'b'))).toMatchObject({ status: 204 });
    expect(await single.receive(signedRequest({ id: 'known-a:b' }))).toMatchObject({ status: 204 });
    expect(tenantRuns.runs.map(([id]) => id)).toEqual(['b']);
    expect(single.runs.map(([id]) => id)).toEqual(['known-a:b']);
  });

  it.each([
    ['no tenant', undefined],
    ['an empty tenant', ''],
  ])('answers 404 unknown_tenant for %s without a lookup', async (_, tenant) => {
    const lookups: string[] = [];
    const { receive, runs } = tenantPipeline({ tenants: { secret: (name: string) => void lookups.push(name) } });
    expect(await receive({ ...signedRequest(), tenant })).toMatchObject({ status: 404, body: { error: { code: 'unknown_tenant' } } });
    expect(lookups).toEqual([]);
    expect(runs).toEqual([]);
  });

  it.each([
    ['a lone UTF-16 surrogate', '\ud800'],
    ['a surrogate pair cut in half', 'known-\udc00x'],
    ['a tenant of 257 characters', `known-${'x'.repeat(251)}`],
    ['an array', ['known-a', 'known-b']],
    ['a number', 42],
  ])('answers 404 unknown_tenant for %s without a lookup', async (_, tenant) => {
    const lookups: string[] = [];
    const { receive, runs } = tenantPipeline({ tenants: { secret: (name: string) => void lookups.push(name), of: () => tenant as string } });
    expect(await receive(signedRequest())).toMatchObject({ status: 404, body: { error: { code: 'unknown_tenant' } } });
    expect(lookups).toEqual([]);
    expect(runs).toEqual([]);
  });

  it('looks up a tenant of 256 characters', async () => {
    const tenant = `known-${'x'.repeat(250)}`;
    const { receive, runs } = tenantPipeline({ tenants: { of: () => tenant } });
    expect(await receive(toTenant(tenant))).toMatchObject({ status: 204 });
    expect(runs).toEqual([['evt_1', expect.objectContaining({ tenant })]]);
  });

  it('keeps no tenant longer than 256 characters in the secret cache, whatever forged requests name', async () => {
    const lookups: string[] = [];
    const long = (i: number): string => `${i}-${'x'.repeat(10_000)}`;
    let i = 0;
    const { receive } = tenantPipeline({ tenants: { secret: (name: string) => void lookups.push(name), of: () => long(i++) } });
    for (let n = 0; n < 100; n++) expect(await receive(signedRequest())).toMatchObject({ status: 404 });
    expect(lookups).toEqual([]);
  });

  it('waits for a tenants.of that answers a promise, and looks up what it resolves to', async () => {
    const { receive, runs } = tenantPipeline({ tenants: { of: async (request: TenantRequest) => request.tenant } });
    expect(await receive(toTenant('known-a'))).toMatchObject({ status: 204 });
    expect(runs).toEqual([['evt_1', expect.objectContaining({ id: 'evt_1', keyId: '0', tenant: 'known-a' })]]);
  });

  it('answers 503 for a tenants.of whose promise rejects, as for one that throws', async () => {
    const heard: unknown[] = [];
    const { receive } = tenantPipeline({ tenants: { of: () => Promise.reject(new Error('no params')), onLookupError: (_error, context) => void heard.push(context) } });
    expect(await receive(toTenant('known-a'))).toMatchObject({ status: 503, body: { error: { code: 'secret_unavailable' } } });
    expect(heard).toStrictEqual([{ operation: 'lookup', id: 'evt_1' }]);
  });

  it('reads the tenant only of a request that passed every check needing no secret', async () => {
    const read = vi.fn((request: TenantRequest) => request.tenant);
    const { receive } = tenantPipeline({ tenants: { of: read } });
    const stale = { ...signedRequest({ timestamp: 1_600_000_000, secret: secretOf('known-a') }), tenant: 'known-a' };
    expect(await receive(stale)).toMatchObject({ status: 400, body: { error: { code: 'timestamp_too_old' } } });
    expect(read).not.toHaveBeenCalled();
  });

  it('logs a tenants.of that threw as such, naming no tenant', async () => {
    const lines: string[] = [];
    vi.spyOn(console, 'error').mockImplementation((line: string) => void lines.push(line));
    const { receive } = tenantPipeline({
      tenants: {
        of: () => {
          throw new Error('no route params');
        },
      },
    });
    await receive(toTenant('known-a', 'evt_6'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('tenants.of threw for delivery "evt_6" (Error: no route params)');
    expect(lines[0]).not.toContain('undefined');
  });

  it('answers 404 unknown_tenant for a tenant the resolver does not know, never 410', async () => {
    const { receive } = tenantPipeline({});
    expect(await receive(toTenant('stranger'))).toMatchObject({ status: 404, body: { error: { code: 'unknown_tenant' } } });
  });

  it('answers 503 secret_unavailable with Retry-After when the lookup fails, and tells onLookupError and the secret lookup channel', async () => {
    const down = new Error('secrets database down');
    const heard: [unknown, LookupErrorContext][] = [];
    const published: SecretLookupMessage[] = [];
    const listen = (message: unknown) => void published.push(message as SecretLookupMessage);
    diagnostics.subscribe(SECRET_LOOKUP_CHANNEL, listen);
    try {
      const { receive, runs } = tenantPipeline({
        tenants: { secret: () => Promise.reject(down), onLookupError: (error, context) => void heard.push([error, context]) },
      });
      const answer = await receive(toTenant('known-a', 'evt_9'));
      expect(answer).toMatchObject({ status: 503, headers: { 'retry-after': '5' }, body: { error: { code: 'secret_unavailable' } } });
      expect((answer as { error?: Error }).error?.cause).toBe(down);
      expect(runs).toEqual([]);
      expect(heard).toEqual([[down, { operation: 'lookup', id: 'evt_9', tenant: 'known-a' }]]);
      expect(published).toEqual([{ id: 'evt_9', tenant: 'known-a', error: down }]);
    } finally {
      diagnostics.unsubscribe(SECRET_LOOKUP_CHANNEL, listen);
    }
  });

  it('answers 503 and reports it when tenants.of throws', async () => {
    const broken = new Error('no route params');
    const heard: [unknown, LookupErrorContext][] = [];
    const { receive } = tenantPipeline({
      tenants: {
        of: () => {
          throw broken;
        },
        onLookupError: (error, context) => void heard.push([error, context]),
      },
    });
    expect(await receive(toTenant('known-a'))).toMatchObject({
      status: 503,
      headers: { 'retry-after': '5' },
      body: { error: { code: 'secret_unavailable', message: 'the tenant of this request could not be read; retry later' } },
    });
    expect(heard).toStrictEqual([[broken, { operation: 'lookup', id: 'evt_1' }]]);
  });

  it('logs a failed lookup by default in one line naming the tenant and the delivery, without any secret', async () => {
    const lines: string[] = [];
    vi.spyOn(console, 'error').mockImplementation((line: string) => void lines.push(line));
    const { receive } = tenantPipeline({ tenants: { secret: () => Promise.reject(new Error('ECONNREFUSED 127.0.0.1:5432')) } });
    await receive(toTenant('known-a', 'evt_2'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('the secret lookup for tenant "known-a" failed (delivery "evt_2"');
    expect(lines[0]).toContain('ECONNREFUSED');
    expect(lines[0]).toContain('answered 503');
    expect(lines[0]).not.toContain('whsec_');
  });

  it("answers a refusal after the lookup as verify() does, without Retry-After and without a report", async () => {
    const heard: unknown[] = [];
    const { receive } = tenantPipeline({ tenants: { onLookupError: (error) => void heard.push(error) }, dedup: { onError: (error) => void heard.push(error) } });
    const forged = { ...signedRequest({ secret: secretOf('attacker') }), tenant: 'known-a' };
    const answer = await receive(forged);
    expect(answer).toMatchObject({ status: 400, body: { error: { code: 'invalid_signature' } } });
    expect(answer?.headers).toEqual({});
    expect(await receive(toTenant('stranger'))).toMatchObject({ status: 404, headers: {} });
    expect(heard).toEqual([]);
  });

  it('logs a failed lookup by default even while a failing dedup store keeps its own log quiet', async () => {
    const lines: string[] = [];
    vi.spyOn(console, 'error').mockImplementation((line: string) => void lines.push(line));
    const dedup = new TestDedupStore();
    dedup.failing = true;
    let lookups = 0;
    const { receive } = tenantPipeline({ dedup: { store: dedup }, tenants: { secret: (tenant: string) => (++lookups === 1 ? secretOf(tenant) : Promise.reject(new Error('db down'))) } });
    expect(await receive(toTenant('known-a', 'evt_4'))).toMatchObject({ status: 503, body: { error: { code: 'dedup_unavailable' } } });
    expect(await receive(toTenant('known-b', 'evt_5'))).toMatchObject({ status: 503, body: { error: { code: 'secret_unavailable' } } });
    expect(lines).toHaveLength(2);
    expect(lines[0]).toContain(`the dedup store failed to begin event "${keyOf('evt_4', secretOf('known-a'))}"`);
    expect(lines[1]).toContain('the secret lookup for tenant "known-b" failed');
  });

  it('refuses a stale or forged request before any lookup, with the refusal of verify()', async () => {
    const lookups: string[] = [];
    const { receive } = tenantPipeline({ tenants: { secret: (tenant: string) => void lookups.push(tenant) } });
    const stale = { ...signedRequest({ timestamp: 1_600_000_000, secret: secretOf('known-a') }), tenant: 'known-a' };
    expect(await receive(stale)).toMatchObject({ status: 400, body: { error: { code: 'timestamp_too_old' } } });
    const unsigned = { body: stale.body, headers: { ...signedRequest().headers, 'webhook-signature': 'v1,forged' }, tenant: 'known-a' };
    expect(await receive(unsigned)).toMatchObject({ status: 400, body: { error: { code: 'invalid_signature' } } });
    expect(lookups).toEqual([]);
  });

  it('names the tenant in the delivery trace', async () => {
    const heard = hearDeliveries();
    try {
      const { receive } = tenantPipeline({});
      await receive(toTenant('known-a', 'evt_3'));
      expect(heard.traces).toMatchObject([{ status: 204, outcome: 'processed', delivery: deliveryOf({ id: 'evt_3', secret: secretOf('known-a'), tenant: 'known-a' }) }]);
    } finally {
      heard.stop();
    }
  });

  it('gives no tenant to handlers of a receiver of one endpoint', async () => {
    const { receive, runs } = tenantPipeline({ secret: SECRET, tenants: undefined });
    expect(await receive(signedRequest())).toMatchObject({ status: 204 });
    expect(runs).toEqual([['evt_1', deliveryOf()]]);
  });

  it('refuses tenants without a function to read the tenant or with a bad cache option, and a secret beside them, at creation', () => {
    expect(() => tenantPipeline({ tenants: { of: undefined } })).toThrow(new WebhookOptionsError('svc-webhooks: tenants.of must be a function from the request to the tenant'));
    expect(() => tenantPipeline({ tenants: { of: 'acme' as never } })).toThrow(new WebhookOptionsError('svc-webhooks: tenants.of must be a function from the request to the tenant'));
    expect(() => tenantPipeline({ tenants: { cacheMs: -1 } })).toThrow(new WebhookOptionsError('svc-webhooks: tenants.cacheMs must be a whole number of milliseconds from 1 to 9007199254740991'));
    expect(() => tenantPipeline({ tenants: { lookupTimeoutMs: 2 ** 31 } })).toThrow(/^svc-webhooks: tenants\.lookupTimeoutMs must be/);
    expect(() => tenantPipeline({ tenants: { cacheSize: 0 } })).toThrow(new WebhookOptionsError('svc-webhooks: tenants.cacheSize must be a positive integer'));
    expect(() => tenantPipeline({ tenants: { onLookupError: 'log' as never } })).toThrow(new WebhookOptionsError('svc-webhooks: tenants.onLookupError must be a function'));
    expect(() => tenantPipeline({ secret: SECRET })).toThrow(
      new WebhookOptionsError('svc-webhooks: give secret (one endpoint) or tenants (many tenants, each with its own secret): exactly one of them'),
    );
  });
});
