/**
 * The shared set-up of a Postgres suite: a test database with a pg pool and a
 * postgres.js sql, opened before the suite and closed after it, and names
 * for tables and schemas that are dropped at the end.
 */
import type pg from 'pg';
import type postgres from 'postgres';
import { afterAll, beforeAll } from 'vitest';
import { pgPool, postgresJs, uniqueTable } from './postgres-clients.js';
import { testDatabase, type TestDatabase } from './test-database.js';

export interface PostgresSuite {
  readonly url: string;
  readonly pool: pg.Pool;
  readonly sql: postgres.Sql;
  /** A table name no other run uses, dropped after the suite. */
  table(purpose: string): string;
  /** A new schema, dropped with its tables after the suite. */
  schema(): Promise<string>;
}

export function postgresSuite(): PostgresSuite {
  let database: TestDatabase | undefined;
  let pool: pg.Pool | undefined;
  let sql: postgres.Sql | undefined;
  const drops: string[] = [];
  beforeAll(async () => {
    database = await testDatabase();
    pool = pgPool(database.url);
    sql = postgresJs(database.url);
  }, 60_000);
  afterAll(async () => {
    for (const drop of drops.reverse()) await pool?.query(drop);
    await sql?.end();
    await pool?.end();
    await database?.close();
  });
  const opened = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the test database is not open yet');
    return value;
  };
  return {
    get url() {
      return opened(database).url;
    },
    get pool() {
      return opened(pool);
    },
    get sql() {
      return opened(sql);
    },
    table(purpose) {
      const name = uniqueTable(purpose);
      drops.push(`DROP TABLE IF EXISTS ${name}`);
      return name;
    },
    async schema() {
      const name = uniqueTable('schema');
      drops.push(`DROP SCHEMA IF EXISTS ${name} CASCADE`);
      await opened(pool).query(`CREATE SCHEMA ${name}`);
      return name;
    },
  };
}
