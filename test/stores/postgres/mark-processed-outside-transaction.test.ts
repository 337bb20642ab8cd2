/**
 * markProcessed on a connection that is in no transaction: the record would
 * commit alone, so a side effect failing after it would leave its retry
 * skipped as a duplicate. It must refuse, record nothing, and leave the
 * retry to be processed.
 */
import { sql as drizzleSql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import type { PostgresConnection } from '../../../src/stores/postgres/connection.js';
import { markProcessed } from '../../../src/stores/postgres/mark-processed.js';
import { migrateProcessedEvents } from '../../../src/stores/postgres/migrate.js';
import { postgresSuite } from '../../helpers/postgres-suite.js';

const suite = postgresSuite();
const table = suite.table('processed');

beforeAll(async () => {
  await migrateProcessedEvents(suite.pool, { table });
});

async function recorded(id: string): Promise<boolean> {
  const { rows } = await suite.pool.query(`SELECT 1 FROM ${table} WHERE id = $1`, [id]);
  return rows.length === 1;
}

/** Expects the refusal: a TypeError saying where to call markProcessed, caused by Postgres' 25P01, and no record. */
async function expectRefused(answer: Promise<boolean>, id: string): Promise<void> {
  const error = await answer.then(
    () => undefined,
    (rejection: unknown) => rejection,
  );
  expect(error).toBeInstanceOf(TypeError);
  expect((error as TypeError).message).toMatch(/^svc-webhooks: markProcessed ran outside a transaction \(its connection had no BEGIN\), .*: call markProcessed inside the transaction that does the side effect, on its connection$/);
  expect(rootCause(error)).toMatchObject({ code: '25P01' });
  expect(await recorded(id)).toBe(false);
}

function rootCause(error: unknown): unknown {
  let current = error;
  while ((current as { cause?: unknown }).cause !== undefined) current = (current as { cause: unknown }).cause;
  return current;
}

describe('markProcessed outside a transaction', () => {
  it('refuses a pg Client on which BEGIN was never sent, and the retry in a transaction is processed', async () => {
    const client = new pg.Client({ connectionString: suite.url });
    await client.connect();
    try {
      await expectRefused(markProcessed(client, 'evt_client', { table }), 'evt_client');
      // The connection is left as it was: the delivery done right records the event.
      await client.query('BEGIN');
      expect(await markProcessed(client, 'evt_client', { table })).toBe(true);
      await client.query('COMMIT');
      expect(await recorded('evt_client')).toBe(true);
    } finally {
      await client.end();
    }
  });

  it('refuses a pool client after COMMIT', async () => {
    const client = await suite.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('COMMIT');
      await expectRefused(markProcessed(client, 'evt_committed', { table }), 'evt_committed');
    } finally {
      client.release();
    }
  });

  it('refuses a query function over a pool, even while a client of that pool holds an open transaction', async () => {
    const overPool: PostgresConnection = (text, params) => suite.pool.query(text, params);
    await expectRefused(markProcessed(overPool, 'evt_pool', { table }), 'evt_pool');
    const client = await suite.pool.connect();
    try {
      await client.query('BEGIN');
      await expectRefused(markProcessed(overPool, 'evt_pool', { table }), 'evt_pool');
      await client.query('ROLLBACK');
    } finally {
      client.release();
    }
  });

  it('finds the refusal inside an ORM error that wraps the driver error (Drizzle outside db.transaction)', async () => {
    const db = drizzle(suite.pool);
    const query = (text: string, params: string[]) => {
      const [head = '', ...tail] = text.split(/\$\d+/);
      return db.execute(drizzleSql.join([drizzleSql.raw(head), ...tail.flatMap((piece, i) => [drizzleSql.param(params[i]), drizzleSql.raw(piece)])]));
    };
    await expectRefused(markProcessed(query, 'evt_drizzle', { table }), 'evt_drizzle');
  });

  it('refuses a postgres.js reserved connection without BEGIN, and one kept after its sql.begin() settled', async () => {
    const reserved = await suite.sql.reserve();
    try {
      await expectRefused(markProcessed(reserved, 'evt_reserved', { table }), 'evt_reserved');
    } finally {
      reserved.release();
    }
    let kept: PostgresConnection | undefined;
    await suite.sql.begin(async (tx) => {
      kept = tx;
    });
    await expectRefused(markProcessed(kept!, 'evt_kept', { table }), 'evt_kept');
  });

  it('still throws at once for a postgres.js top-level sql, which has begin()', () => {
    expect(() => markProcessed(suite.sql, 'evt_top', { table })).toThrow(TypeError);
  });

  it('passes on any other failure as it is: a missing table inside a transaction', async () => {
    const client = await suite.pool.connect();
    try {
      await client.query('BEGIN');
      await expect(markProcessed(client, 'evt_1', { table: suite.table('missing') })).rejects.toMatchObject({ code: '42P01' });
      await client.query('ROLLBACK');
    } finally {
      client.release();
    }
  });

  it('needs no privilege beyond INSERT and SELECT on the table, as the INSERT alone did', async () => {
    const role = `${table}_writer`;
    await suite.pool.query(`CREATE ROLE ${role}`);
    const client = await suite.pool.connect();
    try {
      await suite.pool.query(`GRANT INSERT, SELECT ON ${table} TO ${role}`);
      await client.query('BEGIN');
      await client.query(`SET LOCAL ROLE ${role}`);
      expect(await markProcessed(client, 'evt_writer', { table })).toBe(true);
      await client.query('COMMIT');
    } finally {
      client.release();
      await suite.pool.query(`REVOKE ALL ON ${table} FROM ${role}`);
      await suite.pool.query(`DROP ROLE ${role}`);
    }
    expect(await recorded('evt_writer')).toBe(true);
  });
});
