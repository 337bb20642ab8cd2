/**
 * Many tenants over real HTTP on every entry, their secrets in a Postgres
 * table of 10,000 tenants: a hung lookup is cut off, a changed secret takes
 * over within tenants.cacheMs, and deduplication is per tenant. What
 * hundreds of deliveries cost in lookups is test/load/many-tenants.test.ts's,
 * among the long runs.
 */
import { describe, expect, it } from 'vitest';
import { signedRequest } from '../helpers/signed-request.js';
import { deliver, secretOf, tenantName, tenantTable } from '../helpers/tenant-table.js';
import { TENANT_SERVERS, type TenantServerOptions } from '../helpers/tenant-servers.js';

const table = tenantTable();

describe.each(Object.entries(TENANT_SERVERS))('many tenants on %s', (_entry, serve) => {
  const served = (tenants?: Partial<TenantServerOptions['tenants']>) => table.served(serve, tenants);

  it('answers 503 secret_unavailable with Retry-After within tenants.lookupTimeoutMs when the lookup hangs', async () => {
    const heard: unknown[] = [];
    const { app } = await served({
      secret: () => new Promise<never>(() => {}),
      lookupTimeoutMs: 300,
      onLookupError: (_error, context) => void heard.push(context),
    });
    try {
      const started = performance.now();
      const response = await fetch(`${app.url}/webhooks/${tenantName(1)}`, { method: 'POST', ...signedRequest({ secret: secretOf(tenantName(1)) }) });
      const elapsed = performance.now() - started;
      expect(response.status).toBe(503);
      expect(response.headers.get('retry-after')).toBe('5');
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe('secret_unavailable');
      expect(elapsed).toBeGreaterThanOrEqual(290);
      // Well within the sender's 10 s: the lookup's bound, not the sender's, ended it.
      expect(elapsed).toBeLessThan(3000);
      expect(heard).toEqual([{ operation: 'lookup', id: 'evt_1', tenant: tenantName(1) }]);
    } finally {
      await app.close();
    }
  });

  it('accepts a secret changed in the table within tenants.cacheMs, and refuses the old one after it', async () => {
    const { app, clock } = await served({ cacheMs: 30_000 });
    const tenant = tenantName(7);
    try {
      expect(await deliver(app, tenant, signedRequest({ id: 'evt_before', secret: secretOf(tenant, 1) }))).toBe(204);
      await table.pool.query(`UPDATE ${table.name} SET secret = $2 WHERE tenant = $1`, [tenant, secretOf(tenant, 2)]);
      clock.advance(30_000);
      expect(await deliver(app, tenant, signedRequest({ id: 'evt_after', secret: secretOf(tenant, 2) }))).toBe(204);
      expect(await deliver(app, tenant, signedRequest({ id: 'evt_old', secret: secretOf(tenant, 1) }))).toBe(400);
    } finally {
      await table.pool.query(`UPDATE ${table.name} SET secret = $2 WHERE tenant = $1`, [tenant, secretOf(tenant, 1)]);
      await app.close();
    }
  });

  it('runs the same event id delivered to two tenants once for each, however often each copy comes', async () => {
    const { app, runs } = await served();
    try {
      const [a, b] = [tenantName(100), tenantName(200)];
      const copies = [a, b, a, b, a, b].map((tenant) => deliver(app, tenant, signedRequest({ id: 'evt_shared', secret: secretOf(tenant) })));
      const statuses = await Promise.all(copies);
      expect(statuses.filter((status) => status === 204)).toHaveLength(2);
      expect(statuses.every((status) => [200, 204, 409].includes(status))).toBe(true);
      expect(runs.sort()).toEqual([`${a}/evt_shared`, `${b}/evt_shared`]);
    } finally {
      await app.close();
    }
  });

  it('runs an event once when two tenant names resolve to one secret: one endpoint, under the name that came first', async () => {
    const shared = secretOf('shared');
    const { app, runs } = await served({ secret: () => shared });
    try {
      expect(await deliver(app, 'alias-a', signedRequest({ id: 'evt_alias', secret: shared }))).toBe(204);
      expect(await deliver(app, 'alias-b', signedRequest({ id: 'evt_alias', secret: shared }))).toBe(200);
      expect(runs).toEqual(['alias-a/evt_alias']);
    } finally {
      await app.close();
    }
  });
});
