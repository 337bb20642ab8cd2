/** Connections and table names for the Postgres suites. */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import postgres from 'postgres';

/** A table name no other test run uses. */
export function uniqueTable(purpose: string): string {
  return `svc_webhooks_test_${purpose}_${randomBytes(5).toString('hex')}`;
}

/** A pg pool whose idle clients may fail without taking the process down. */
export function pgPool(url: string, options: pg.PoolConfig = {}): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max: 8, ...options });
  pool.on('error', () => {});
  return pool;
}

/** A postgres.js sql that keeps server notices out of the test output. */
export function postgresJs(url: string, options: postgres.Options<Record<string, never>> = {}): postgres.Sql {
  return postgres(url, { max: 8, onnotice: () => {}, ...options });
}
