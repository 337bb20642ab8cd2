/**
 * Many tenants over real HTTP on every entry, their secrets in a Postgres
 * table of 10,000 tenants: lookups are cached and collapsed, requests that
 * fail a check needing no secret cost no lookup, forged requests to made-up
 * tenants cost one lookup per tenant, a hung lookup is cut off, a changed
 * secret takes over within secretCacheMs, and deduplication is per tenant.
 */
import { Buffer } from 'node:buffer';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SecretResolver } from '../../src/index.js';
import type { ServedApp } from '../helpers/http-harness.js';
import { NOW_SECONDS, signedRequest, type SignedRequest } from '../helpers/signed-request.js';
import { TENANT_SERVERS, type TenantServerOptions } from '../helpers/tenant-servers.js';
import { pgPool, uniqueTable } from '../helpers/postgres-clients.js';
import { testDatabase, type TestDatabase } from '../helpers/test-database.js';

const TENANTS = 10_000;
const secretOf = (tenant: string, version = 1): string => `whsec_${Buffer.from(`${tenant}-secret-v${version}`).toString('base64')}`;
const tenantName = (i: number): string => `tenant-${String(i).padStart(5, '0')}`;
/** The tests of hundreds of deliveries assert what they cost in lookups, not how fast a shared machine serves them. */
const BULK_TIMEOUT_MS = 30_000;

let database: TestDatabase;
let pool: pg.Pool;
const table = uniqueTable('tenants');

beforeAll(async () => {
  database = await testDatabase();
  pool = pgPool(database.url, { max: 10 });
  await pool.query(`CREATE TABLE ${table} (tenant text PRIMARY KEY, secret text NOT NULL)`);
  const names = [...Array(TENANTS)].map((_, i) => tenantName(i));
  await pool.query(`INSERT INTO ${table} (tenant, secret) SELECT t, s FROM unnest($1::text[], $2::text[]) AS u(t, s)`, [
    names,
    names.map((name) => secretOf(name)),
  ]);
}, 60_000);

afterAll(async () => {
  await pool?.query(`DROP TABLE IF EXISTS ${table}`);
  await pool?.end();
  await database?.close();
});

/** A resolver reading the table, counting the lookups per tenant; each takes at least `seconds`, as a remote store may. */
function tableResolver(seconds = 0) {
  const lookups = new Map<string, number>();
  const resolve: SecretResolver = async (tenant) => {
    lookups.set(tenant, (lookups.get(tenant) ?? 0) + 1);
    const { rows } = await pool.query<{ secret: string }>(`SELECT secret, pg_sleep($2) FROM ${table} WHERE tenant = $1`, [tenant, seconds]);
    return rows[0]?.secret;
  };
  const total = (): number => [...lookups.values()].reduce((sum, count) => sum + count, 0);
  return { resolve, lookups, total };
}

/** A clock the test moves, starting where the requests are signed. */
function movableClock() {
  let at = NOW_SECONDS * 1000;
  return { now: () => at, advance: (ms: number) => void (at += ms) };
}

/** POSTs `request` to `tenant`'s endpoint; answers the status. */
async function deliver(app: ServedApp, tenant: string, { body, headers }: SignedRequest): Promise<number> {
  const response = await fetch(`${app.url}/webhooks/${encodeURIComponent(tenant)}`, { method: 'POST', body, headers });
  await response.arrayBuffer();
  return response.status;
}

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

describe.each(Object.entries(TENANT_SERVERS))('many tenants on %s', (_entry, serve) => {
  /** Serves a receiver of every tenant in the table, with `tenants` over its lookup; `runs` lists `tenant/id` per handler run. */
  async function served(tenants: Partial<TenantServerOptions['tenants']> = {}, lookupSeconds = 0) {
    const runs: string[] = [];
    const lookup = tableResolver(lookupSeconds);
    const clock = movableClock();
    const app = await serve({
      // The bulk runs count lookups: one the busy machine delays past the 2 s default is no lookup they test.
      tenants: { secret: lookup.resolve, lookupTimeoutMs: 30_000, ...tenants },
      now: clock.now,
      on: { 'call.missed': (event, { tenant }) => void runs.push(`${tenant}/${event.id}`) },
    });
    return { app, runs, lookup, clock };
  }

  it('makes at most one lookup per tenant for 500 concurrent valid deliveries over 50 tenants', async () => {
    // Lookups of 200 ms: requests for a tenant arrive while its lookup runs, and must share it.
    const { app, runs, lookup } = await served({}, 0.2);
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
    const { app, runs, lookup } = await served();
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
    const { app, runs, lookup } = await served();
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
      await pool.query(`UPDATE ${table} SET secret = $2 WHERE tenant = $1`, [tenant, secretOf(tenant, 2)]);
      clock.advance(30_000);
      expect(await deliver(app, tenant, signedRequest({ id: 'evt_after', secret: secretOf(tenant, 2) }))).toBe(204);
      expect(await deliver(app, tenant, signedRequest({ id: 'evt_old', secret: secretOf(tenant, 1) }))).toBe(400);
    } finally {
      await pool.query(`UPDATE ${table} SET secret = $2 WHERE tenant = $1`, [tenant, secretOf(tenant, 1)]);
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

function withHeader({ body, headers }: SignedRequest, name: string, value: string): SignedRequest {
  return { body, headers: { ...headers, [name]: value } };
}
