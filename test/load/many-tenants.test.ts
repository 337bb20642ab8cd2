/**
 * Many tenants under hundreds of deliveries over real HTTP on every entry,
 * their secrets in a Postgres table of 10,000 tenants: lookups are cached and
 * collapsed, requests that fail a check needing no secret cost no lookup,
 * and forged requests to made-up tenants cost one lookup per tenant, none
 * for their repeats. A minute on two cores, so among the long runs;
 * test/adapters/tenants.test.ts holds the rest of the tenants over HTTP.
 */
import { describe, expect, it } from 'vitest';
import { NOW_SECONDS, signedRequest, type SignedRequest } from '../helpers/signed-request.js';
import { deliver, secretOf, TENANTS, tenantName, tenantTable } from '../helpers/tenant-table.js';
import { TENANT_SERVERS } from '../helpers/tenant-servers.js';

/** The tests of hundreds of deliveries assert what they cost in lookups, not how fast a shared machine serves them. */
const BULK_TIMEOUT_MS = 30_000;

const table = tenantTable();

/** Runs `count` deliveries, at most `concurrency` at once; answers their statuses in order. */
async function deliverMany(count: number, concurrency: number, send: (i: number) => Promise<number>): Promise<number[]> {
  const statuses = new Array<number>(count);
  let next = 0;
  await Promise.all(
    [...Array(concurrency)].map(async () => {
      while (next < count) {
        const i = next++;
        statuses[i] = await send(i);
      }
    }),
  );
  return statuses;
}

const tally = (statuses: readonly number[]): Record<number, number> =>
  statuses.reduce<Record<number, number>>((counts, status) => ({ ...counts, [status]: (counts[status] ?? 0) + 1 }), {});

describe.each(Object.entries(TENANT_SERVERS))('many tenants on %s under load', (_entry, serve) => {
  it('makes at most one lookup per tenant for 500 concurrent valid deliveries over 50 tenants', async () => {
    // Lookups of 200 ms: requests for a tenant arrive while its lookup runs, and must share it.
    const { app, runs, lookup } = await table.served(serve, {}, 0.2);
    try {
      const statuses = await Promise.all(
        [...Array(500)].map((_, i) => {
          const tenant = tenantName(i % 50);
          return deliver(app, tenant, signedRequest({ id: `evt_${i}`, secret: secretOf(tenant) }));
        }),
      );
      expect(tally(statuses)).toEqual({ 204: 500 });
      expect(lookup.total()).toBeLessThanOrEqual(50);
      expect(lookup.lookups.size).toBe(50);
      expect(new Set(runs).size).toBe(500);
    } finally {
      await app.close();
    }
  }, BULK_TIMEOUT_MS);

  it('answers 1,000 forged deliveries to 1,000 unknown tenants 404 with one lookup per tenant, and none for their repeats', async () => {
    const { app, runs, lookup } = await table.served(serve);
    try {
      const unknown = (i: number): string => `unknown-${i}-${Math.random().toString(36).slice(2)}`;
      const tenants = [...Array(1000)].map((_, i) => unknown(i));
      const forged = (i: number) => deliver(app, tenants[i]!, signedRequest({ id: `evt_forged_${i}`, secret: secretOf('attacker') }));
      expect(tally(await deliverMany(1000, 100, forged))).toEqual({ 404: 1000 });
      expect(lookup.total()).toBe(1000);
      expect(Math.max(...lookup.lookups.values())).toBe(1);
      // The same tenants again: the absence is cached.
      expect(tally(await deliverMany(1000, 100, forged))).toEqual({ 404: 1000 });
      expect(lookup.total()).toBe(1000);
      expect(runs).toEqual([]);
    } finally {
      await app.close();
    }
  }, BULK_TIMEOUT_MS);

  it('makes no lookup for 1,000 stale or malformed deliveries', async () => {
    const { app, runs, lookup } = await table.served(serve);
    try {
      const faults: ((tenant: string, i: number) => SignedRequest)[] = [
        (tenant, i) => signedRequest({ id: `evt_${i}`, secret: secretOf(tenant), timestamp: NOW_SECONDS - 301 - i }),
        (tenant, i) => signedRequest({ id: `evt_${i}`, secret: secretOf(tenant), timestamp: NOW_SECONDS + 301 + i }),
        (tenant, i) => withHeader(signedRequest({ id: `evt_${i}`, secret: secretOf(tenant) }), 'webhook-signature', `v1,${'A'.repeat(i % 40)}`),
        (tenant, i) => withHeader(signedRequest({ id: `evt_${i}`, secret: secretOf(tenant) }), 'webhook-timestamp', `${NOW_SECONDS}.5`),
        (tenant, i) => withHeader(signedRequest({ id: `evt_${i}`, secret: secretOf(tenant) }), 'webhook-id', ''),
      ];
      const statuses = await deliverMany(1000, 100, (i) => {
        const tenant = tenantName(i % TENANTS);
        return deliver(app, tenant, faults[i % faults.length]!(tenant, i));
      });
      expect(tally(statuses)).toEqual({ 400: 1000 });
      expect(lookup.total()).toBe(0);
      expect(runs).toEqual([]);
    } finally {
      await app.close();
    }
  }, BULK_TIMEOUT_MS);
});

function withHeader({ body, headers }: SignedRequest, name: string, value: string): SignedRequest {
  return { body, headers: { ...headers, [name]: value } };
}
