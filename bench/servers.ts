/**
 * What the benchmarks run against: the Postgres at DATABASE_URL (the one
 * the machine runs; a benchmark starts no server of its own), a node:http
 * server on a free port, and the quantiles of what they time.
 */
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';

/** The database a benchmark runs on. */
export const DATABASE_URL = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';

/** A table or schema name no other run uses. */
export function uniqueName(purpose: string): string {
  return `svc_webhooks_bench_${purpose}_${randomBytes(5).toString('hex')}`;
}

/** A pg pool on DATABASE_URL whose idle clients may fail without taking the process down. */
export function benchPool(max: number): pg.Pool {
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max });
  pool.on('error', () => {});
  return pool;
}

/** Starts `server` on 127.0.0.1, on a free port; answers its base URL. */
export async function listen(server: Server): Promise<string> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** The `q` quantile (0.99 for p99) of `values`, by the nearest rank; `NaN` for none. */
export function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? Number.NaN;
}
