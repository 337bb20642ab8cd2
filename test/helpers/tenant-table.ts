/**
 * The Postgres table of 10,000 tenants and their secrets that the suites of
 * many tenants over HTTP share, a lookup of it that counts its calls, and a
 * receiver of every tenant in it on each entry.
 */
import { Buffer } from 'node:buffer';
import type pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import type { SecretResolver } from '../../src/index.js';
import type { ServedApp } from './http-harness.js';
import { pgPool, uniqueTable } from './postgres-clients.js';
import { NOW_SECONDS, type SignedRequest } from './signed-request.js';
import type { TenantServer, TenantServerOptions } from './tenant-servers.js';
import { testDatabase, type TestDatabase } from './test-database.js';

export const TENANTS = 10_000;
export const secretOf = (tenant: string, version = 1): string => `whsec_${Buffer.from(`${tenant}-secret-v${version}`).toString('base64')}`;
export const tenantName = (i: number): string => `tenant-${String(i).padStart(5, '0')}`;

export interface TenantTable {
  /** The table's name, once the suite has started. */
  readonly name: string;
  /** A pool on the table's database, once the suite has started. */
  readonly pool: pg.Pool;
  /** Serves a receiver of every tenant in the table on `serve`'s entry, with `tenants` over its lookup; `runs` lists `tenant/id` per handler run. */
  served(serve: TenantServer, tenants?: Partial<TenantServerOptions['tenants']>, lookupSeconds?: number): Promise<ServedTenants>;
}

export interface ServedTenants {
  readonly app: ServedApp;
  readonly runs: string[];
  readonly lookup: CountedLookup;
  readonly clock: ReturnType<typeof movableClock>;
}

/** A lookup of the table that counts its calls per tenant. */
export interface CountedLookup {
  readonly resolve: SecretResolver;
  readonly lookups: Map<string, number>;
  total(): number;
}

/** Creates the table for the suite calling it, before its tests, and drops it after them. */
export function tenantTable(): TenantTable {
  let database: TestDatabase;
  let pool: pg.Pool;
  const name = uniqueTable('tenants');

  beforeAll(async () => {
    database = await testDatabase();
    pool = pgPool(database.url, { max: 10 });
    await pool.query(`CREATE TABLE ${name} (tenant text PRIMARY KEY, secret text NOT NULL)`);
    const names = [...Array(TENANTS)].map((_, i) => tenantName(i));
    await pool.query(`INSERT INTO ${name} (tenant, secret) SELECT t, s FROM unnest($1::text[], $2::text[]) AS u(t, s)`, [
      names,
      names.map((tenant) => secretOf(tenant)),
    ]);
  }, 60_000);

  afterAll(async () => {
    await pool?.query(`DROP TABLE IF EXISTS ${name}`);
    await pool?.end();
    await database?.close();
  });

  /** A resolver reading the table, counting the lookups per tenant; each takes at least `seconds`, as a remote store may. */
  function tableResolver(seconds: number): CountedLookup {
    const lookups = new Map<string, number>();
    const resolve: SecretResolver = async (tenant) => {
      lookups.set(tenant, (lookups.get(tenant) ?? 0) + 1);
      const { rows } = await pool.query<{ secret: string }>(`SELECT secret, pg_sleep($2) FROM ${name} WHERE tenant = $1`, [tenant, seconds]);
      return rows[0]?.secret;
    };
    const total = (): number => [...lookups.values()].reduce((sum, count) => sum + count, 0);
    return { resolve, lookups, total };
  }

  return {
    name,
    get pool() {
      return pool;
    },
    async served(serve, tenants = {}, lookupSeconds = 0) {
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
    },
  };
}

/** A clock the test moves, starting where the requests are signed. */
function movableClock() {
  let at = NOW_SECONDS * 1000;
  return { now: () => at, advance: (ms: number) => void (at += ms) };
}

/** POSTs `request` to `tenant`'s endpoint; answers the status. */
export async function deliver(app: ServedApp, tenant: string, { body, headers }: SignedRequest): Promise<number> {
  const response = await fetch(`${app.url}/webhooks/${encodeURIComponent(tenant)}`, { method: 'POST', body, headers });
  await response.arrayBuffer();
  return response.status;
}
