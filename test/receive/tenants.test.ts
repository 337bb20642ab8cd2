/** Many tenants behind one receiver: the tenant read from the request, its secret looked up, deduplication scoped by it. */
import { Buffer } from 'node:buffer';
import diagnostics from 'node:diagnostics_channel';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DELIVERY_CHANNEL, STORE_CHANNEL, type DeliveryMessage, type StoreMessage } from '../../src/receive/diagnostics.js';
import { eventKey } from '../../src/receive/event-key.js';
import { createPipeline, type EntryOptions } from '../../src/receive/pipeline.js';
import type { WebhookResponse } from '../../src/receive/responses.js';
import type { StoreErrorContext } from '../../src/receive/claim.js';
import { decidedAnswers } from '../helpers/decided-answers.js';
import { now, SECRET, signedRequest, type SignedRequest } from '../helpers/signed-request.js';
import { TestDedupStore } from '../helpers/test-dedup-store.js';

const secretOf = (tenant: string): string => `whsec_${Buffer.from(`secret-of-${tenant}`).toString('base64')}`;

/** A signed request to `tenant`'s endpoint. */
type TenantRequest = SignedRequest & { readonly tenant?: string };
const toTenant = (tenant: string | undefined, id = 'evt_1'): TenantRequest => ({ ...signedRequest({ id, secret: secretOf(tenant ?? '') }), tenant });

function tenantPipeline(options: Partial<EntryOptions> & { readonly tenant?: (request: TenantRequest) => string | undefined }) {
  const runs: unknown[][] = [];
  const receive = createPipeline<TenantRequest, WebhookResponse>(
    {
      secret: (tenant: string) => (tenant.startsWith('known') ? secretOf(tenant) : undefined),
      tenant: (request: TenantRequest) => request.tenant,
      now,
      on: { 'call.missed': (event, context) => void runs.push([event.id, context]) },
      ...options,
    },
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
    const { receive, runs } = tenantPipeline({ dedup });
    expect(await receive(toTenant('known-a'))).toMatchObject({ status: 204 });
    expect(await receive(toTenant('known-b'))).toMatchObject({ status: 204 });
    expect(await receive(toTenant('known-a'))).toMatchObject({ status: 200, body: { duplicate: true } });
    expect(runs).toEqual([
      ['evt_1', { id: 'evt_1', keyId: '0', tenant: 'known-a' }],
      ['evt_1', { id: 'evt_1', keyId: '0', tenant: 'known-b' }],
    ]);
    expect(dedup.stateOf(eventKey('evt_1', 'known-a'))).toBe('done');
    expect(dedup.stateOf(eventKey('evt_1', 'known-b'))).toBe('done');
    expect(dedup.stateOf('evt_1')).toBe('absent');
  });

  it('scopes deduplication by the tenant with one secret shared by all tenants too', async () => {
    const { receive, runs } = tenantPipeline({ secret: SECRET });
    const shared = (tenant: string): TenantRequest => ({ ...signedRequest(), tenant });
    expect(await receive(shared('a'))).toMatchObject({ status: 204 });
    expect(await receive(shared('b'))).toMatchObject({ status: 204 });
    expect(await receive(shared('b'))).toMatchObject({ status: 200 });
    expect(runs.map(([, context]) => (context as { tenant: string }).tenant)).toEqual(['a', 'b']);
  });

  it.each([
    ['no tenant', undefined],
    ['an empty tenant', ''],
  ])('answers 404 unknown_tenant for %s without a lookup', async (_, tenant) => {
    const lookups: string[] = [];
    const { receive, runs } = tenantPipeline({ secret: (name: string) => void lookups.push(name) });
    expect(await receive({ ...signedRequest(), tenant })).toMatchObject({ status: 404, body: { error: { code: 'unknown_tenant' } } });
    expect(lookups).toEqual([]);
    expect(runs).toEqual([]);
  });

  it('answers 404 unknown_tenant for a tenant the resolver does not know, never 410', async () => {
    const { receive } = tenantPipeline({});
    expect(await receive(toTenant('stranger'))).toMatchObject({ status: 404, body: { error: { code: 'unknown_tenant' } } });
  });

  it('answers 503 secret_unavailable with Retry-After when the lookup fails, and tells onStoreError and the store channel', async () => {
    const down = new Error('secrets database down');
    const heard: [unknown, StoreErrorContext][] = [];
    const published: StoreMessage[] = [];
    const listen = (message: unknown) => void published.push(message as StoreMessage);
    diagnostics.subscribe(STORE_CHANNEL, listen);
    try {
      const { receive, runs } = tenantPipeline({
        secret: () => Promise.reject(down),
        onStoreError: (error, context) => void heard.push([error, context]),
      });
      const answer = await receive(toTenant('known-a', 'evt_9'));
      expect(answer).toMatchObject({ status: 503, headers: { 'retry-after': '5' }, body: { error: { code: 'secret_unavailable' } } });
      expect((answer as { error?: Error }).error?.cause).toBe(down);
      expect(runs).toEqual([]);
      expect(heard).toEqual([[down, { operation: 'lookup', id: 'evt_9', tenant: 'known-a' }]]);
      expect(published).toEqual([{ operation: 'lookup', id: 'evt_9', tenant: 'known-a', attempt: 1, error: down }]);
    } finally {
      diagnostics.unsubscribe(STORE_CHANNEL, listen);
    }
  });

  it('answers 503 and reports it when the tenant function throws', async () => {
    const broken = new Error('no route params');
    const heard: [unknown, StoreErrorContext][] = [];
    const { receive } = tenantPipeline({
      tenant: () => {
        throw broken;
      },
      onStoreError: (error, context) => void heard.push([error, context]),
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
    const { receive } = tenantPipeline({ secret: () => Promise.reject(new Error('ECONNREFUSED 127.0.0.1:5432')) });
    await receive(toTenant('known-a', 'evt_2'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('the secret lookup for tenant "known-a" failed (delivery "evt_2"');
    expect(lines[0]).toContain('ECONNREFUSED');
    expect(lines[0]).toContain('answered 503');
    expect(lines[0]).not.toContain('whsec_');
  });

  it("answers a refusal after the lookup as verify() does, without Retry-After and without a report", async () => {
    const heard: unknown[] = [];
    const { receive } = tenantPipeline({ onStoreError: (error) => void heard.push(error) });
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
    const { receive } = tenantPipeline({ dedup, secret: (tenant: string) => (++lookups === 1 ? secretOf(tenant) : Promise.reject(new Error('db down'))) });
    expect(await receive(toTenant('known-a', 'evt_4'))).toMatchObject({ status: 503, body: { error: { code: 'dedup_unavailable' } } });
    expect(await receive(toTenant('known-b', 'evt_5'))).toMatchObject({ status: 503, body: { error: { code: 'secret_unavailable' } } });
    expect(lines).toHaveLength(2);
    expect(lines[0]).toContain('the dedup store failed to begin event "known-a:evt_4"');
    expect(lines[1]).toContain('the secret lookup for tenant "known-b" failed');
  });

  it('refuses a stale or forged request before any lookup, with the refusal of verify()', async () => {
    const lookups: string[] = [];
    const { receive } = tenantPipeline({ secret: (tenant: string) => void lookups.push(tenant) });
    const stale = { ...signedRequest({ timestamp: 1_600_000_000, secret: secretOf('known-a') }), tenant: 'known-a' };
    expect(await receive(stale)).toMatchObject({ status: 400, body: { error: { code: 'timestamp_too_old' } } });
    const unsigned = { body: stale.body, headers: { ...signedRequest().headers, 'webhook-signature': 'v1,forged' }, tenant: 'known-a' };
    expect(await receive(unsigned)).toMatchObject({ status: 400, body: { error: { code: 'invalid_signature' } } });
    expect(lookups).toEqual([]);
  });

  it('names the tenant in the delivery message', async () => {
    const published: DeliveryMessage[] = [];
    const listen = (message: unknown) => void published.push(message as DeliveryMessage);
    diagnostics.subscribe(DELIVERY_CHANNEL, listen);
    try {
      const { receive } = tenantPipeline({});
      await receive(toTenant('known-a', 'evt_3'));
      expect(published).toEqual([expect.objectContaining({ status: 204, outcome: 'processed', id: 'evt_3', tenant: 'known-a', keyId: '0' })]);
    } finally {
      diagnostics.unsubscribe(DELIVERY_CHANNEL, listen);
    }
  });

  it('gives no tenant to handlers of a receiver of one endpoint', async () => {
    const { receive, runs } = tenantPipeline({ secret: SECRET, tenant: undefined });
    expect(await receive(signedRequest())).toMatchObject({ status: 204 });
    expect(runs).toEqual([['evt_1', { id: 'evt_1', keyId: '0' }]]);
  });

  it('refuses a looked-up secret without tenant, and a tenant that is no function, at creation', () => {
    expect(() => tenantPipeline({ tenant: undefined })).toThrow(/needs the tenant option/);
    expect(() => tenantPipeline({ tenant: 'acme' as never })).toThrow(new TypeError('svc-webhooks: tenant must be a function from the request to the tenant'));
    expect(() => tenantPipeline({ secretCacheMs: -1 })).toThrow(/secretCacheMs/);
  });
});
